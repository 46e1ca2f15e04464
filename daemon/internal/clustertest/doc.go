// Package clustertest runs a real NATS cluster with JetStream in the test
// process: three nats-server nodes on loopback, each with its own client
// port, cluster port and store directory, routed to one another. It waits
// for the JetStream meta leader with a bounded poll, because a cluster takes
// seconds to form, and lets a test stop and start nodes to lose and regain
// quorum.
//
// It is for tests only, and starts nothing that listens beyond loopback.
// What is deliberately not here: anything garm-specific (streams, buckets
// and garmd are the test's), and leaf nodes, gateways and accounts.
package clustertest
