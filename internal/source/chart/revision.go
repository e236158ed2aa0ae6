package chart

import (
	"strconv"
	"strings"
)

// Source kinds a chart comes from, as spec.sourceRef.kind names them.
const (
	kindHelmRepository = "HelmRepository"
	kindGitRepository  = "GitRepository"
	kindBucket         = "Bucket"
)

// shortRevisionLength is how much of a source revision's hex goes into the
// chart version: Flux keeps 12, as chart versions end up in 63-character
// labels.
const shortRevisionLength = 12

// Stamp is what decides a chart version's build metadata.
type Stamp struct {
	// SourceKind is spec.sourceRef.kind.
	SourceKind string
	// SourceRevision is the source artifact's revision (Git
	// "main@sha1:<hex>", Bucket "sha256:<hex>").
	SourceRevision string
	// RevisionStrategy is true for spec.reconcileStrategy Revision.
	RevisionStrategy bool
	// ValuesFiles is true when spec.valuesFiles has effect.
	ValuesFiles bool
	// Generation is the HelmChart's metadata.generation.
	Generation int64
}

// VersionMetadata is the SemVer build metadata Flux appends to the chart
// version, so that consumers see a new version when what went into the
// artifact changed though the chart's own version did not:
//
//   - from a GitRepository or Bucket with reconcileStrategy Revision, the
//     first 12 hex digits of the source revision's hash (for Git the commit
//     after "@sha1:", for a Bucket the digest's hex);
//   - with valuesFiles, the HelmChart's generation, after a "." if the
//     revision is there too.
//
// So 6.0.3 becomes 6.0.3+0123456789ab, 6.0.3+4 or 6.0.3+0123456789ab.4.
func VersionMetadata(s Stamp) string {
	var meta string
	if s.RevisionStrategy && (s.SourceKind == kindGitRepository || s.SourceKind == kindBucket) {
		meta = revisionHex(s.SourceRevision)
		if len(meta) > shortRevisionLength {
			meta = meta[:shortRevisionLength]
		}
	}
	if s.ValuesFiles {
		if meta != "" {
			meta += "."
		}
		meta += strconv.FormatInt(s.Generation, 10)
	}
	return meta
}

// revisionHex is the hash part of a revision: what follows the last ':'
// ("main@sha1:<hex>", "sha1:<hex>", "sha256:<hex>") or, in the older Git
// format "main/<hex>", the last '/'.
func revisionHex(rev string) string {
	if i := strings.LastIndexByte(rev, ':'); i >= 0 {
		return rev[i+1:]
	}
	if i := strings.LastIndexByte(rev, '/'); i >= 0 {
		return rev[i+1:]
	}
	return rev
}
