// proc-guard: runs one program (the Pulumi CLI of an operation) so that nothing it starts outlives it
// or the operation, built by tools/build-guard.sh. Linux only (prctl). golang.org/x/sys is pinned at the
// version tools/etcd and tools/fleet-render already use, so a warm module cache builds it offline.
module pulumi-fleet.local/tools/proc-guard

go 1.26.0

require golang.org/x/sys v0.49.0
