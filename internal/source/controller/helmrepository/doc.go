// Package helmrepository reconciles HelmRepository objects the way Flux's
// source-controller does.
//
// For type default (an index over HTTP/S) it fetches <url>/index.yaml
// through internal/source/helmrepo, bounded by --helm-index-max-size, and
// stores the parsed index (indented JSON, invalid versions dropped, entries
// sorted) as the artifact helmrepository/<ns>/<name>/index-<hex>.yaml, with
// revision sha256:<hex> of the index as served. An unchanged index is not
// stored again and raises no event: the request carries the ETag or
// Last-Modified of the last download (a 304 costs no body), and a body with
// the stored revision's digest is not even parsed. A new index raises the
// NewArtifact event "stored fetched index of size <size> from '<url>'" and
// goes into the parsed-index cache (--helm-cache-max-size) under its
// artifact path, for the HelmCharts that resolve versions from it. A
// failure keeps the artifact already served. Ready reads "stored artifact:
// revision 'sha256:<hex>'", source-controller's wording.
//
// For type oci the object is static, as in Flux since v1: no finalizer, no
// artifact, an empty status, whatever its provider; HelmCharts read its URL
// and credentials and make the provider's login when they pull.
//
// Differences from Flux, each deliberate: a repository's 401/403 is reported
// with reason AuthenticationFailed (Flux says Failed), as weir's
// OCIRepository does; status.url is the artifact's own URL, as weir's
// storage keeps no "index.yaml" symlink; the HTTP validators that let an
// unchanged index cost a 304 are kept in memory, so the first fetch after a
// restart downloads the index once (and, its digest unchanged, stores
// nothing).
package helmrepository
