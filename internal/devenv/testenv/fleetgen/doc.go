// Package fleetgen writes synthetic fleet repositories of a chosen size for
// tests and benchmarks of the offline loader and `weir lint`: one cluster
// whose root sync applies a cluster-vars ConfigMap, an infrastructure
// Kustomization and N-1 application Kustomizations, each substituting from
// cluster-vars and ordered after the root through infrastructure, so the
// repository is clean by every lint rule.
package fleetgen
