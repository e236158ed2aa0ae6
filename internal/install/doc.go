// Package install puts weir's components into a cluster. For now it owns the
// CustomResourceDefinitions: applying them with server-side apply and waiting
// until the API server serves them.
package install
