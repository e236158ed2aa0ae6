// Package registry is where a consumer (OCIRepository, an OCI
// HelmRepository's charts, ImageRepository, cosign verification pulls)
// asks a cloud registry for credentials: Login switches on spec.provider
// to the cloud's package and answers a go-containerregistry
// Authenticator. Provider generic (or empty) is not its business: those
// consumers read their docker config Secrets themselves.
package registry
