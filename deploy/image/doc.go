// Command image builds garmd's and garm-approvals' OCI images from scratch,
// without a container daemon, reproducibly from the same commit:
//
//	go run ./deploy/image [-o .tmp/image] [-version v] [-time unix-seconds]
//
// (`make image`). Each image holds one static binary (CGO_ENABLED=0,
// -trimpath, its version stamped as `make install` stamps it), the build
// machine's CA certificates, and an /etc/passwd naming the numeric user it
// runs as (not root); no shell and nothing else. Every time in it — the
// tar entries', the image's creation — is the commit's time, tar entries
// are sorted and owned by root, so two builds of one commit are the same
// bytes and the same digest. Each is written as an OCI image layout in a
// tar file, <name>.oci.tar, which `skopeo copy oci-archive:...`, `podman
// load` or `crane push` take as they are.
//
// Not here: pushing to a registry (credentials are the operator's) and
// images for other architectures than the build machine's.
package main
