package meta

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Artifact is a file a source controller stored and serves over HTTP, as
// reported in a source's status. Downstream controllers fetch URL and must
// verify the download against Digest.
type Artifact struct {
	// Path is the path of the file relative to the storage root, in the form
	// <kind>/<namespace>/<name>/<file>.
	// +required
	Path string `json:"path"`

	// URL is where the controller serves the file.
	// +required
	URL string `json:"url"`

	// Revision is the source revision the file was built from, for example
	// main@sha1:<hex> or <tag>@sha256:<hex>.
	// +required
	Revision string `json:"revision"`

	// Digest is <algorithm>:<hex> of the file's bytes.
	// +required
	// +kubebuilder:validation:Pattern="^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$"
	Digest string `json:"digest"`

	// LastUpdateTime is when the file last changed.
	// +required
	LastUpdateTime metav1.Time `json:"lastUpdateTime"`

	// Size is the file's length in bytes.
	// +optional
	Size *int64 `json:"size,omitempty"`

	// Metadata carries producer-specific facts, such as OCI annotations.
	// +optional
	Metadata map[string]string `json:"metadata,omitempty"`
}

// HasRevision reports whether the artifact was built from revision.
func (a *Artifact) HasRevision(revision string) bool {
	return a != nil && a.Revision == revision
}

// HasDigest reports whether the artifact has the given digest.
func (a *Artifact) HasDigest(digest string) bool {
	return a != nil && a.Digest == digest
}

// FileName is the last element of Path.
func (a *Artifact) FileName() string {
	if a == nil {
		return ""
	}
	return a.Path[strings.LastIndex(a.Path, "/")+1:]
}
