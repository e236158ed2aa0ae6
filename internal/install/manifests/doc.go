// Package manifests generates weir's install manifests from Go code: the
// namespace, CRDs, service accounts, RBAC, controller Deployments, Services
// and NetworkPolicies, named and labelled where Flux's tools look for Flux's
// own (Deployments named after the components in flux-system,
// app.kubernetes.io/part-of: flux, …), so that kubectl users, the flux CLI
// and patches written for `flux install --export` output work on weir.
//
// Every controller runs the one weir-controller binary. The split layout
// gives each component its own Deployment with --controllers=<name>; the
// single layout runs them all in one Deployment. `weir install` applies what
// Generate returns; `weir install --export` prints it with YAML.
package manifests
