// Package scan owns what the ImageRepository reconciler asks of a
// registry and what it keeps: parsing spec.image the way Flux does, listing
// every tag of the repository (go-containerregistry's remote.List, which
// follows the registry's Link headers page by page), dropping the tags the
// exclusion list matches, and storing the rest as one bounded,
// digest-addressed file per ImageRepository (Store) that ImagePolicies read.
//
// # Credentials and transport
//
// Keychains, TLS material and proxies come from internal/source/oci (the same
// Secret formats as OCIRepository: kubernetes.io/dockerconfigjson from
// spec.secretRef and the ServiceAccount's imagePullSecrets; ca.crt, tls.crt
// and tls.key; address, username, password). Failures are classified with
// oci's sentinels (oci.ErrAuth, oci.ErrUnreachable, …).
//
// # Order and revision
//
// Tags are kept in Flux's order, descending by byte value, and the revision
// is Flux 2.9's: "sha256:" and the hex SHA-256 of the kept tags, each
// followed by a newline, in that order. The same tags give the same
// revision in Flux and weir, and the ten first are status.lastScanResult's
// latestTags.
//
// # The cap
//
// Flux keeps every tag a registry lists. A repository that publishes a tag
// per commit grows without bound, and so did Flux's BadgerDB. Store keeps at
// most MaxTags per repository (weir-controller's
// --max-tags-per-image-repository, 10,000 by default): beyond it, Cap keeps
// the MaxTags greatest tags in version order (numbers inside a tag compare
// as numbers, so 10.0.0 outranks 9.9.9 and a later timestamp outranks an
// earlier one) and the reconciler says so in a condition. See
// docs/design/0013-image-tags.md.
package scan
