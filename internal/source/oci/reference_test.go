package oci

import (
	"errors"
	"strings"
	"testing"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
)

// The reconciler converts the API type directly; this breaks the build if
// the two drift apart.
var _ = Reference(sourcev1.OCIRepositoryRef{})

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseURL(t *testing.T) {
	tests := []struct {
		url      string
		insecure bool
		wantRepo string // host/repository as go-containerregistry names it
		wantErr  string
	}{
		{url: "oci://ghcr.io/org/app", wantRepo: "ghcr.io/org/app"},
		{url: "oci://ghcr.io/org/team/app", wantRepo: "ghcr.io/org/team/app"},
		{url: "oci://127.0.0.1:5000/app", wantRepo: "127.0.0.1:5000/app"},
		{url: "oci://registry.local:5000/org/app", insecure: true, wantRepo: "registry.local:5000/org/app"},
		{url: "oci://localhost/app", wantRepo: "localhost/app"},
		{url: "oci://docker.io/stefanprodan/podinfo", wantRepo: "index.docker.io/stefanprodan/podinfo"},
		{url: "oci://ghcr.io/org/app/", wantRepo: "ghcr.io/org/app"},
		{url: "https://ghcr.io/org/app", wantErr: "URL must be in format 'oci://<domain>/<org>/<repo>'"},
		{url: "ghcr.io/org/app", wantErr: "URL must be in format"},
		{url: "OCI://ghcr.io/org/app", wantErr: "URL must be in format"},
		{url: "oci://", wantErr: "must name a repository"},
		{url: "oci://ghcr.io", wantErr: "must name a repository"},
		{url: "oci://ghcr.io/", wantErr: "must name a repository"},
		{url: "oci://ghcr.io/org/app:v1.0.0", wantErr: "must not contain a tag or digest; remove ':v1.0.0'"},
		{url: "oci://ghcr.io/org/app@" + digest, wantErr: "must not contain a tag or digest"},
		{url: "oci://ghcr.io/Org/App", wantErr: "repository can only contain"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			repo, err := ParseURL(tt.url, tt.insecure)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("ParseURL(%q) error = %v, want ErrInvalidConfig containing %q", tt.url, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseURL(%q): %v", tt.url, err)
			}
			if got := repo.Name(); got != tt.wantRepo {
				t.Errorf("ParseURL(%q) = %s, want %s", tt.url, got, tt.wantRepo)
			}
			if tt.insecure && repo.Scheme() != "http" {
				t.Errorf("insecure URL got scheme %s", repo.Scheme())
			}
		})
	}
}

func TestReferencePrecedence(t *testing.T) {
	tests := []struct {
		name      string
		ref       Reference
		wantKind  refKind
		wantValue string
		wantErr   string
		tagErr    bool // a *TagError, reported as ReadOperationFailed
	}{
		{name: "empty is latest", ref: Reference{}, wantKind: kindTag, wantValue: "latest"},
		{name: "tag", ref: Reference{Tag: "v1.0.0"}, wantKind: kindTag, wantValue: "v1.0.0"},
		{name: "semver beats tag", ref: Reference{Tag: "v1", SemVer: ">=1.0.0"}, wantKind: kindSemVer, wantValue: ">=1.0.0"},
		{name: "digest beats semver and tag", ref: Reference{Tag: "v1", SemVer: ">=1", Digest: digest}, wantKind: kindDigest, wantValue: digest},
		{name: "filter alone is ignored", ref: Reference{SemverFilter: "^v", Tag: "x"}, wantKind: kindTag, wantValue: "x"},
		{name: "bad digest", ref: Reference{Digest: "sha256:xyz"}, wantErr: "is not of the form sha256:<hex>"},
		{name: "digest without algorithm", ref: Reference{Digest: "0123"}, wantErr: "is not of the form"},
		{name: "bad semver", ref: Reference{SemVer: "not a range"}, wantErr: "semver 'not a range' parse error", tagErr: true},
		{name: "bad filter", ref: Reference{SemVer: ">=1", SemverFilter: "(["}, wantErr: "not a valid regular expression", tagErr: true},
		{name: "bad tag", ref: Reference{Tag: "v1~"}, wantErr: "not a valid tag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ref.resolve()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("resolve() error = %v, want ErrInvalidConfig containing %q", err, tt.wantErr)
				}
				var te *TagError
				if errors.As(err, &te) != tt.tagErr {
					t.Errorf("resolve() error is a TagError: %v, want %v", !tt.tagErr, tt.tagErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("resolve(): %v", err)
			}
			if got.kind != tt.wantKind || got.value != tt.wantValue {
				t.Errorf("resolve() = kind %v value %q, want kind %v value %q", got.kind, got.value, tt.wantKind, tt.wantValue)
			}
		})
	}
}

func TestPickSemVer(t *testing.T) {
	tags := []string{"latest", "1.0.0", "v1.2.0", "1.2.0", "1.3.0-rc.1", "1.10.0", "2.0.0", "v2", "1.4", "main", "1.5.0-rc.2", "sha256-abc.sig"}
	tests := []struct {
		constraint, filter string
		want               string // "" means no match
	}{
		{">=1.0.0 <2.0.0", "", "1.10.0"},
		{"1.2.x", "", "v1.2.0"},  // v1.2.0 and 1.2.0 tie; the greater name wins
		{">=2.0.0", "", "2.0.0"}, // "v2" is not a strict semver
		{"<1.5.0", "", "v1.2.0"}, // "1.4" is not a strict semver
		{">=1.0.0-0", ".*-rc.*", "1.5.0-rc.2"},
		{">=1.0.0-0 <1.4.0", "-rc", "1.3.0-rc.1"},
		{">=1.0.0", "^v", "v1.2.0"},
		{">=3.0.0", "", ""},
		{">=1.0.0", "^release-", ""},
	}
	for _, tt := range tests {
		t.Run(tt.constraint+" "+tt.filter, func(t *testing.T) {
			target, err := Reference{SemVer: tt.constraint, SemverFilter: tt.filter}.resolve()
			if err != nil {
				t.Fatal(err)
			}
			got, ok := pickSemVer(tags, target)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("pickSemVer = %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
}

func TestRevision(t *testing.T) {
	tests := []struct {
		tag, digest, want string
	}{
		{"latest", digest, "latest@" + digest},
		{"v1.2.3", digest, "v1.2.3@" + digest},
		{"6.3.5", digest, "6.3.5@" + digest},
		{"", digest, digest},
	}
	for _, tt := range tests {
		if got := revision(tt.tag, tt.digest); got != tt.want {
			t.Errorf("revision(%q, %q) = %q, want %q", tt.tag, tt.digest, got, tt.want)
		}
	}
	r := &Resolved{Digest: digest}
	if got := r.Hex(); got != strings.TrimPrefix(digest, "sha256:") {
		t.Errorf("Hex() = %q", got)
	}
	if got := SignatureTag(digest); got != "sha256-"+strings.TrimPrefix(digest, "sha256:")+".sig" {
		t.Errorf("SignatureTag() = %q", got)
	}
}

func TestSelectLayer(t *testing.T) {
	layers := layerDescriptors("application/vnd.cncf.flux.content.v1.tar+gzip", "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "application/vnd.cncf.flux.content.v1.tar+gzip")
	tests := []struct {
		mediaType string
		want      int // index, -1 for an error
		wantErr   string
	}{
		{"", 0, ""},
		{"application/vnd.cncf.helm.chart.content.v1.tar+gzip", 1, ""},
		{"application/vnd.cncf.flux.content.v1.tar+gzip", 0, ""},
		{"application/x-other", -1, "failed to find layer with media type 'application/x-other' in artifact"},
	}
	for _, tt := range tests {
		got, err := selectLayer(layers, tt.mediaType)
		if tt.want < 0 {
			if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrLayer) {
				t.Errorf("selectLayer(%q) error = %v, want ErrLayer %q", tt.mediaType, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.Digest != layers[tt.want].Digest {
			t.Errorf("selectLayer(%q) = %v, %v; want layer %d", tt.mediaType, got.Digest, err, tt.want)
		}
	}
	if _, err := selectLayer(nil, ""); err == nil || err.Error() != "no layers found in artifact" {
		t.Errorf("selectLayer(no layers) error = %v", err)
	}
}
