package chart

import "testing"

func TestVersionMetadata(t *testing.T) {
	const gitRev = "main@sha1:0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name string
		s    Stamp
		want string
	}{
		{name: "chart version only", s: Stamp{SourceKind: kindGitRepository, SourceRevision: gitRev}, want: ""},
		{name: "git revision", s: Stamp{SourceKind: kindGitRepository, SourceRevision: gitRev, RevisionStrategy: true}, want: "0123456789ab"},
		{name: "git commit only", s: Stamp{SourceKind: kindGitRepository, SourceRevision: "sha1:abcdefabcdef0123", RevisionStrategy: true}, want: "abcdefabcdef"},
		{name: "git legacy revision", s: Stamp{SourceKind: kindGitRepository, SourceRevision: "main/fedcba9876543210", RevisionStrategy: true}, want: "fedcba987654"},
		{name: "bucket digest", s: Stamp{SourceKind: kindBucket, SourceRevision: "sha256:aaaabbbbccccdddd", RevisionStrategy: true}, want: "aaaabbbbcccc"},
		{name: "git revision and values", s: Stamp{SourceKind: kindGitRepository, SourceRevision: gitRev, RevisionStrategy: true, ValuesFiles: true, Generation: 3}, want: "0123456789ab.3"},
		{name: "git values only", s: Stamp{SourceKind: kindGitRepository, SourceRevision: gitRev, ValuesFiles: true, Generation: 2}, want: "2"},
		{name: "helm repository values", s: Stamp{SourceKind: kindHelmRepository, SourceRevision: "sha256:abc", ValuesFiles: true, Generation: 5}, want: "5"},
		{name: "helm repository ignores Revision", s: Stamp{SourceKind: kindHelmRepository, SourceRevision: "sha256:abc", RevisionStrategy: true}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := VersionMetadata(tt.s); got != tt.want {
				t.Errorf("VersionMetadata = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWithMetadata(t *testing.T) {
	tests := []struct{ version, meta, want, wantErr string }{
		{version: "6.0.3", meta: "", want: "6.0.3"},
		{version: "6.0.3", meta: "0123456789ab", want: "6.0.3+0123456789ab"},
		{version: "6.0.3+old", meta: "4", want: "6.0.3+4"},
		{version: "v1.2.3", meta: "1", want: "1.2.3+1"},
		{version: "6.0.3", meta: "bad meta!", wantErr: "failed to set SemVer metadata"},
		{version: "nope", meta: "1", wantErr: "failed to parse version"},
	}
	for _, tt := range tests {
		got, err := WithMetadata(tt.version, tt.meta)
		if tt.wantErr != "" {
			if err == nil || !contains(err.Error(), tt.wantErr) {
				t.Errorf("WithMetadata(%q, %q) error = %v, want %q", tt.version, tt.meta, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("WithMetadata(%q, %q) = %q, %v; want %q", tt.version, tt.meta, got, err, tt.want)
		}
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		b    Build
		want string
	}{
		{Build{Name: "podinfo", Version: "6.0.3"}, "pulled 'podinfo' chart with version '6.0.3'"},
		{Build{Name: "podinfo", Version: "6.0.3", Packaged: true}, "packaged 'podinfo' chart with version '6.0.3'"},
		{Build{Name: "podinfo", Version: "6.0.3+2", Packaged: true, ValuesFiles: []string{"a.yaml", "b.yaml"}},
			"packaged 'podinfo' chart with version '6.0.3+2' and merged values files [a.yaml b.yaml]"},
	}
	for _, tt := range tests {
		if got := tt.b.Summary(); got != tt.want {
			t.Errorf("Summary = %q, want %q", got, tt.want)
		}
	}
}
