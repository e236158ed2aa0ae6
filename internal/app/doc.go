// Package app assembles weir-controller: it parses Flux's controller flags,
// builds one controller-runtime manager, and starts the controllers that
// --controllers selects. The list of controllers is explicit (controllers.go)
// so that one binary can run as one small pod or be split like Flux's
// source-, kustomize-, helm- and notification-controller Deployments.
package app
