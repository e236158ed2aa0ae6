// Package oci owns everything the OCIRepository reconciler asks of an OCI
// registry: reading credentials and TLS material from Secrets, resolving a
// reference to a revision with one manifest HEAD, pulling the manifest and
// one layer of an artifact into a directory (extracted) or a file (copied),
// and verifying cosign signatures made with a public key. The reconciler
// sees the small Client/Remote interface; go-containerregistry is the
// implementation.
//
// # URLs
//
// An OCIRepository URL is oci://<host>[:port]/<repository>, without a tag
// or digest (those go in spec.ref). ParseURL refuses any other scheme, a URL
// with no repository path, and a tag or digest in the path. A host without
// a dot, colon or "localhost" is read the way go-containerregistry (and so
// Flux) reads it: as a Docker Hub repository.
//
// # Revisions
//
// Revision strings are Flux's, byte for byte:
//
//	tag v1.2.3 (or the default "latest")  v1.2.3@sha256:<manifest hex>
//	semver ">=1.0.0"                      <chosen tag>@sha256:<hex>
//	digest sha256:<hex>                   sha256:<hex>
//
// When several fields of a Reference are set, Digest wins over SemVer, which
// wins over Tag (source-controller's precedence). SemverFilter, a regular
// expression, is applied to the listed tags before SemVer; tags must be
// strict semantic versions, with an optional leading "v" (fluxcd/pkg
// version.ParseVersion). When two tags are the same version (v1.2.3 and
// 1.2.3) the greater name wins, so the choice does not depend on the order
// the registry lists them in.
//
// # The no-op check
//
// Resolve makes one manifest HEAD for tag and semver references (plus the
// tag listing for semver, and the registry's /v2/ ping); no manifest or blob
// is downloaded. A registry that refuses HEAD gets one GET of the manifest
// instead. A digest reference resolves without any request. The reconciler
// compares the revision with the stored artifact's and only then calls Pull.
//
// # Pull
//
// Pull fetches the manifest by digest (never the tag again, so the content
// always matches the revision even if the tag moves in between), selects the
// first layer, or the first with the wanted media type, and either extracts
// it with artifact.Untar (bounded, and refusing entries that would land
// outside the directory) or copies the compressed blob to a file. Blobs are
// checked against their digest as they are read. The manifest's annotations
// (org.opencontainers.image.source, .revision, .created, …) are returned for
// the artifact's metadata.
//
// # Credentials and transport
//
// Credentials come from kubernetes.io/dockerconfigjson (".dockerconfigjson")
// or legacy kubernetes.io/dockercfg (".dockercfg") Secrets, in the order
// given: spec.secretRef first, then the ServiceAccount's imagePullSecrets.
// A registry key may carry a scheme, a port, a path prefix and, like the
// kubelet's, "*" wildcards in host labels; the most specific match wins.
// Docker Hub keys (https://index.docker.io/v1/, docker.io, …) match Docker
// Hub. TLS material (ca.crt, tls.crt, tls.key) extends the system roots, as
// Flux does. spec.insecure allows plain HTTP and, only when no certificate
// Secret is given, skips TLS verification: Flux makes this one exception for
// OCIRepository so that registries with self-signed certificates keep
// working, and weir keeps it for the same reason. Nothing here prints a
// password, token or key: Keychain.String names registries and users only.
//
// # Cosign
//
// VerifyCosign checks signatures in cosign's classic layout without sigstore
// libraries: the signatures of manifest sha256:X are the layers of the image
// tagged sha256-X.sig in the same repository; each layer's blob is a
// "simple signing" JSON payload and its dev.cosignproject.cosign/signature
// annotation the base64 ASN.1 ECDSA signature of the payload's SHA-256. A
// signature verifies when its payload is a cosign container image signature
// naming exactly the resolved digest and the signature checks out with one
// of the trusted keys. As in Flux's key-based verification, the Rekor
// transparency log is not consulted and the docker-reference in the payload
// is not compared with the repository. Not supported: keyless (Fulcio
// certificate) signatures, cosign v3 bundles found through the OCI 1.1
// referrers API, and keys other than ECDSA.
//
// # Errors
//
// Failures match one of ErrInvalidConfig, ErrAuth, ErrNotFound,
// ErrUnreachable, ErrTLS, ErrLayer or ErrVerification with errors.Is, and a
// failure to choose a semver tag is also a *TagError, so the reconciler can
// pick Flux's condition reason and decide whether to retry. Messages are
// lower-case and never contain secret values.
package oci
