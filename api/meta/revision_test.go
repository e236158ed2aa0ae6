package meta

import "testing"

func TestSameRevisionAcceptsLegacyFormats(t *testing.T) {
	const sha = "5394cb7f48332b2de7c17dd8b8384bbc84b7e738"
	tests := []struct {
		a, b string
		want bool
	}{
		{"main@sha1:" + sha, "main@sha1:" + sha, true},
		{"main@sha1:" + sha, "main/" + sha, true},
		{"main@sha1:" + sha, sha, true},
		{"main@sha1:" + sha, "sha1:" + sha, true},
		{"main@sha1:" + sha, "main@sha1:0000", false},
		{"main@sha1:" + sha, "", false},
		{"", "", false},
		{"latest@sha256:abc", "sha256:abc", true},
	}
	for _, tt := range tests {
		if got := SameRevision(tt.a, tt.b); got != tt.want {
			t.Errorf("SameRevision(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
