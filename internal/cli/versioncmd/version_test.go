package versioncmd

import "testing"

func TestSplitImage(t *testing.T) {
	for _, tt := range []struct{ image, name, tag string }{
		{"ghcr.io/fluxcd/source-controller:v1.7.0", "source-controller", "v1.7.0"},
		{"127.0.0.1:5000/weir-controller:v1", "weir-controller", "v1"},
		{"weir-controller", "weir-controller", "latest"},
		{"localhost:5000/a/b@sha256:abc", "b", "sha256:abc"},
		{"reg/a/b:v2@sha256:abc", "b", "v2"},
	} {
		if name, tag := splitImage(tt.image); name != tt.name || tag != tt.tag {
			t.Errorf("splitImage(%q) = %q, %q; want %q, %q", tt.image, name, tag, tt.name, tt.tag)
		}
	}
}
