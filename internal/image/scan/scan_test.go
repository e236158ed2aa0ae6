package scan

import (
	"slices"
	"strings"
	"testing"
)

func TestParseImage(t *testing.T) {
	tests := []struct {
		image, canonical, err string
	}{
		{image: "alpine", canonical: "index.docker.io/library/alpine"},
		{image: "ghcr.io/stefanprodan/podinfo", canonical: "ghcr.io/stefanprodan/podinfo"},
		{image: "127.0.0.1:5000/team/app", canonical: "127.0.0.1:5000/team/app"},
		{image: "https://ghcr.io/a/b", err: ".spec.image value should not start with URL scheme; remove 'https://'"},
		{image: "ghcr.io/a/b:v1", err: ".spec.image value should not contain a tag; remove ':v1'"},
		{image: "ghcr.io/a/b@sha256:" + strings.Repeat("a", 64), err: ".spec.image value should not contain a digest; remove '@sha256:" + strings.Repeat("a", 64) + "'"},
		{image: "ghcr.io/A B", err: "could not parse reference: ghcr.io/A B"},
	}
	for _, tt := range tests {
		repo, err := ParseImage(tt.image, false)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%s: error %v, want %q", tt.image, err, tt.err)
			}
			continue
		}
		if err != nil || repo.String() != tt.canonical {
			t.Errorf("%s: %q, %v; want %q", tt.image, repo.String(), err, tt.canonical)
		}
	}
}

func TestExclude(t *testing.T) {
	tags := []string{"1.0.0", "sha256-abc.sig", "1.1.0", "sha256-abc.att", "latest"}
	got, err := Exclude(tags, []string{`^.*\.sig$`})
	if want := []string{"sha256-abc.att", "latest", "1.1.0", "1.0.0"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("default list: %v, %v; want %v", got, err, want)
	}
	got, _ = Exclude(tags, []string{`^.*\.sig$`, `^.*\.att$`, `^latest$`})
	if want := []string{"1.1.0", "1.0.0"}; !slices.Equal(got, want) {
		t.Errorf("three patterns: %v; want %v", got, want)
	}
	got, _ = Exclude(tags, []string{})
	if len(got) != len(tags) {
		t.Errorf("an empty list excludes nothing: %v", got)
	}
	if _, err := Exclude(tags, []string{"("}); err == nil || !strings.HasPrefix(err.Error(), "failed to compile regex (: ") {
		t.Errorf("bad pattern: %v", err)
	}
}

func TestLatest(t *testing.T) {
	tags := strings.Fields("a b c d e f g h i j k l")
	Sort(tags)
	if got := Latest(tags); !slices.Equal(got, strings.Fields("l k j i h g f e d c")) {
		t.Errorf("Latest: %v", got)
	}
	if Latest(nil) != nil {
		t.Error("Latest of nothing is nil")
	}
}

func TestCompareNatural(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"v10.0.0", "v9.9.9", 1},
		{"1.2.3", "1.2.3", 0},
		{"build-20240102", "build-20231231", 1},
		{"main-abc-100", "main-abc-99", 1},
		{"7", "007", -1},
		{"a", "b", -1},
		{"1.0", "1.0.1", -1},
		{"rc", "1", 1},
	}
	for _, tt := range tests {
		if got := CompareNatural(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareNatural(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestCap(t *testing.T) {
	tags := []string{"9.0.0", "10.0.0", "11.0.0", "8.0.0", "1.0.0"}
	Sort(tags)
	kept, dropped := Cap(tags, 3)
	if want := []string{"9.0.0", "11.0.0", "10.0.0"}; !slices.Equal(kept, want) || dropped != 2 {
		t.Errorf("Cap: %v, %d; want %v, 2", kept, dropped, want)
	}
	if kept, dropped := Cap(tags, 0); len(kept) != 5 || dropped != 0 {
		t.Errorf("no cap: %v, %d", kept, dropped)
	}
	if kept, dropped := Cap(tags, 5); len(kept) != 5 || dropped != 0 {
		t.Errorf("at the cap: %v, %d", kept, dropped)
	}
}
