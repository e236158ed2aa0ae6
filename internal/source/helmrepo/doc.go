// Package helmrepo is weir's client for Helm chart repositories, shared by
// the HelmRepository and HelmChart reconcilers: it turns a HelmRepository and
// its Secrets into a Client, fetches and parses index.yaml (Helm's own
// loader, helm.sh/helm/v4/pkg/repo/v1), downloads chart archives, hands out
// the registry options of OCI repositories to internal/source/oci, and keeps parsed
// indexes in a bounded cache.
//
// # Credentials
//
// Flux's rules, which are Helm's: spec.secretRef holds username and password
// (basic auth) and, deprecated but honoured, TLS keys; spec.certSecretRef
// holds tls.crt, tls.key and ca.crt (the CA extends the system roots); both
// also accept the legacy certFile, keyFile and caFile keys. Basic auth goes
// only to the scheme and host (port included) of spec.url, unless
// spec.passCredentials is true: an index may list chart URLs on another
// host, which then gets no Authorization header. For type oci the Secret is
// a kubernetes.io/dockerconfigjson or a username/password login for the
// registry host; without one, a cloud provider logs in through
// internal/auth/registry. Credentials appear in
// no error, and String/GoString print none.
//
// # Index, revision and artifact
//
// FetchIndex streams index.yaml to a temporary file while hashing it, and
// refuses more than --helm-index-max-size bytes (Flux's default 50 MiB)
// before reading further. The revision is sha256:<hex> of the bytes as
// served, as source-controller computes it (its documentation says "after
// sorting"; its code digests the download). The HelmRepository artifact is
// the parsed index (invalid versions dropped, entries sorted) as indented
// JSON, named index-<revision hex>.yaml, again as source-controller does;
// LoadIndexFile reads it back. An unchanged index costs one conditional
// request (If-None-Match / If-Modified-Since) or, when the server ignores
// those, one download that is hashed but not parsed.
//
// # Not hand-written
//
// Helm's getter has no context, no size bound and no conditional requests,
// so the HTTP exchange is net/http following its rules (user agent, no
// transparent decompression, credentials per host); parsing, validation,
// sorting, chart URL resolution and version selection are Helm's.
package helmrepo
