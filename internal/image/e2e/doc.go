// Package e2e holds the end-to-end test of image automation: a tag
// pushed to a registry reaches a running Deployment through weir's own
// controllers, as weir-controller runs them (image-reflector, image-automation,
// source, kustomize), a real control plane with a kwok node, the in-process
// OCI registry and Git server. It has no code of its own.
package e2e
