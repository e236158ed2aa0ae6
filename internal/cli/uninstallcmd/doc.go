// Package uninstallcmd implements `weir uninstall`: release every weir
// custom resource from weir's finalizer, then delete the controllers, RBAC,
// CRDs and namespace, so that what weir deployed keeps running (see
// install.Uninstall), as `flux uninstall` does.
package uninstallcmd
