package tagpolicy

import (
	"errors"
	"testing"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
)

func semverPolicy(r string) imagev1.ImagePolicyChoice {
	return imagev1.ImagePolicyChoice{SemVer: &imagev1.SemVerPolicy{Range: r}}
}

func alpha(o string) imagev1.ImagePolicyChoice {
	return imagev1.ImagePolicyChoice{Alphabetical: &imagev1.AlphabeticalPolicy{Order: o}}
}

func numeric(o string) imagev1.ImagePolicyChoice {
	return imagev1.ImagePolicyChoice{Numerical: &imagev1.NumericalPolicy{Order: o}}
}

// TestLatest runs the examples of Flux's ImagePolicy documentation and the
// edge cases of each order.
func TestLatest(t *testing.T) {
	tests := []struct {
		name   string
		choice imagev1.ImagePolicyChoice
		filter *imagev1.TagFilter
		tags   []string
		want   string
		err    string
	}{
		{name: "semver range", choice: semverPolicy("5.0.x"),
			tags: []string{"5.0.0", "5.0.3", "5.1.0", "latest", "5.0.2"}, want: "5.0.3"},
		{name: "semver with v prefix", choice: semverPolicy(">=1.0.0 <2.0.0"),
			tags: []string{"v1.0.0", "v1.9.1", "v2.0.0", "1.9.0"}, want: "v1.9.1"},
		{name: "semver skips pre-releases outside the range", choice: semverPolicy(">=1.0.0"),
			tags: []string{"1.0.0", "1.1.0-rc.1"}, want: "1.0.0"},
		{name: "semver pre-releases asked for", choice: semverPolicy(">=1.0.0-0"),
			tags: []string{"1.0.0", "1.1.0-rc.1"}, want: "1.1.0-rc.1"},
		{name: "semver none in range", choice: semverPolicy("6.x"), tags: []string{"5.0.0", "latest"},
			err: "unable to determine latest version from provided list"},
		{name: "semver on extracted versions (docs: ^1.x-beta)", choice: semverPolicy("^1.x-0"),
			filter: &imagev1.TagFilter{Pattern: `^(?P<v>1\..*-beta.*)$`, Extract: "$v"},
			tags:   []string{"1.0.0-beta.1", "1.2.0-beta.3", "1.3.0", "2.0.0-beta.1"}, want: "1.2.0-beta.3"},
		{name: "alphabetical asc on minio RELEASE timestamps (docs)", choice: alpha("asc"),
			filter: &imagev1.TagFilter{Pattern: `^RELEASE\.(?P<timestamp>.*)Z$`, Extract: "$timestamp"},
			tags:   []string{"RELEASE.2021-01-01T00-00-00Z", "RELEASE.2022-03-04T10-11-12Z", "RELEASE.2021-12-31T23-59-59Z", "latest"},
			want:   "RELEASE.2022-03-04T10-11-12Z"},
		{name: "alphabetical default is asc", choice: alpha(""), tags: []string{"a", "c", "b"}, want: "c"},
		{name: "alphabetical desc", choice: alpha("desc"), tags: []string{"b", "a", "c"}, want: "a"},
		{name: "numerical asc on main-<sha>-<ts> builds (docs)", choice: numeric("asc"),
			filter: &imagev1.TagFilter{Pattern: `^main-[a-fA-F0-9]+-(?P<ts>.*)`, Extract: "$ts"},
			tags:   []string{"main-3f2a1b0-1611147430", "main-8e1c2d3-1611150000", "feature-abc-1700000000", "main-0a0a0a0-1611140000"},
			want:   "main-8e1c2d3-1611150000"},
		{name: "numerical desc", choice: numeric("desc"), tags: []string{"10", "2", "33"}, want: "2"},
		{name: "numerical compares values, not text", choice: numeric("asc"), tags: []string{"9", "10", "1.5"}, want: "10"},
		{name: "numerical refuses text", choice: numeric("asc"), tags: []string{"1", "latest"},
			err: "failed to parse invalid numeric value 'latest'"},
		{name: "filter without extract", choice: alpha("asc"),
			filter: &imagev1.TagFilter{Pattern: `^prod-`}, tags: []string{"prod-a", "prod-b", "stage-z"}, want: "prod-b"},
		{name: "filter matching nothing", choice: alpha("asc"),
			filter: &imagev1.TagFilter{Pattern: `^prod-`}, tags: []string{"stage-z"},
			err: "version list argument cannot be empty"},
		{name: "extract with a numbered group", choice: numeric("asc"),
			filter: &imagev1.TagFilter{Pattern: `^build-(\d+)$`, Extract: "${1}"},
			tags:   []string{"build-7", "build-12", "build-3"}, want: "build-12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.choice, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Latest(tt.tags)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Latest = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestNewInvalid(t *testing.T) {
	tests := []struct {
		name   string
		choice imagev1.ImagePolicyChoice
		filter *imagev1.TagFilter
		err    string
	}{
		{"no policy", imagev1.ImagePolicyChoice{}, nil, "invalid policy: given ImagePolicyChoice object is invalid"},
		{"bad range", semverPolicy("not a range"), nil, `invalid policy: improper constraint: "not a range"`},
		{"bad order", alpha("newest"), nil, "invalid policy: invalid order argument provided: 'NEWEST', must be one of: ASC, DESC"},
		{"bad pattern", alpha("asc"), &imagev1.TagFilter{Pattern: "("}, "failed to filter tags: invalid regular expression pattern '(': error parsing regexp: missing closing ): `(`"},
	}
	for _, tt := range tests {
		_, err := New(tt.choice, tt.filter)
		if err == nil || err.Error() != tt.err || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.err)
		}
	}
}
