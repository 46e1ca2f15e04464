package wire

import "strings"

// Subject is the NATS subject a tool is served on, derived from its method
// path: "/calc.v1.Calculator/Add" becomes "calc.v1.Calculator.Add".
func Subject(method string) string {
	return strings.ReplaceAll(strings.TrimPrefix(method, "/"), "/", ".")
}

// QueueGroup is the queue group a tool is served in: the full name of its
// proto service, so every instance of a service shares the load.
func QueueGroup(service string) string { return service }

// ServiceName is the micro service name of a proto service: its full name
// with "." replaced by "_" (micro allows no dots). It is what ties a running
// service to its package: the bus lets only the package's identity answer
// discovery under that name, and garmd's quarantine counts a service for
// the package its name derives from, and for no other.
func ServiceName(service string) string { return strings.ReplaceAll(service, ".", "_") }

// EndpointName is the micro endpoint name of a tool: its subject with "."
// replaced by "_".
func EndpointName(subject string) string { return strings.ReplaceAll(subject, ".", "_") }
