// Package install puts weir's components into a cluster and takes them out
// again: it applies what internal/install/manifests generates with server-side
// apply (field manager "flux", as Flux's CLI), waits for the CRDs to be
// Established and the controller Deployments to be Current by kstatus rules,
// and, for uninstall, releases every weir custom resource from weir's
// finalizers before deleting the controllers and CRDs, so that removing
// weir never removes what weir deployed.
package install
