// Package render owns the step between a Kustomization object and
// kustomize.Build: it turns the spec into build options, assembles
// spec.postBuild's variables (substituteFrom ConfigMaps and Secrets in
// order, then substitute over them) and gives the build a SOPS decryptor
// holding the keys of spec.decryption.secretRef.
//
// Everything it reads from the cluster goes through a client.Reader, so the
// kustomize controller (an uncached API reader), `weir build` (the cluster,
// or nothing with --dry-run) and the offline fleet loader (a reader over the
// objects the repository itself yields, internal/fleet) share one
// implementation: what `weir lint` sees is what the controller builds.
package render
