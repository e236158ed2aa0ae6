package v1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
)

func TestGitRepositoryIncludeGetToPath(t *testing.T) {
	tests := []struct {
		name    string
		include GitRepositoryInclude
		want    string
	}{
		{"defaults to repository name", GitRepositoryInclude{GitRepositoryRef: meta.LocalObjectReference{Name: "lib"}}, "lib"},
		{"explicit path wins", GitRepositoryInclude{GitRepositoryRef: meta.LocalObjectReference{Name: "lib"}, ToPath: "vendor/lib"}, "vendor/lib"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.include.GetToPath(); got != tt.want {
				t.Errorf("GetToPath() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestGitRepositoryVerificationMode(t *testing.T) {
	tests := []struct {
		mode      GitVerificationMode
		want      GitVerificationMode
		head, tag bool
	}{
		{"", ModeGitHEAD, true, false},
		{"head", ModeGitHEAD, true, false},
		{ModeGitHEAD, ModeGitHEAD, true, false},
		{ModeGitTag, ModeGitTag, false, true},
		{ModeGitTagAndHEAD, ModeGitTagAndHEAD, true, true},
		{"bogus", ModeGitHEAD, true, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			v := &GitRepositoryVerification{Mode: tt.mode}
			if got := v.GetMode(); got != tt.want {
				t.Errorf("GetMode() = %q, want %q", got, tt.want)
			}
			if got := v.VerifyHEAD(); got != tt.head {
				t.Errorf("VerifyHEAD() = %v, want %v", got, tt.head)
			}
			if got := v.VerifyTag(); got != tt.tag {
				t.Errorf("VerifyTag() = %v, want %v", got, tt.tag)
			}
		})
	}
}

func TestGitRepositoryGetReference(t *testing.T) {
	tests := []struct {
		name string
		ref  *GitRepositoryRef
		want GitRepositoryRef
	}{
		{"nil ref", nil, GitRepositoryRef{Branch: "master"}},
		{"empty ref", &GitRepositoryRef{}, GitRepositoryRef{Branch: "master"}},
		{"branch", &GitRepositoryRef{Branch: "main"}, GitRepositoryRef{Branch: "main"}},
		{"commit only", &GitRepositoryRef{Commit: "abc123"}, GitRepositoryRef{Commit: "abc123"}},
		{"tag", &GitRepositoryRef{Tag: "v1.0.0"}, GitRepositoryRef{Tag: "v1.0.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := &GitRepository{Spec: GitRepositorySpec{Reference: tt.ref}}
			if got := repo.GetReference(); got != tt.want {
				t.Errorf("GetReference() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestGitRepositoryDefaults(t *testing.T) {
	repo := &GitRepository{}
	if got := repo.GetTimeout(); got != 60*time.Second {
		t.Errorf("GetTimeout() = %v, want 60s", got)
	}
	if got := repo.GetProvider(); got != GitProviderGeneric {
		t.Errorf("GetProvider() = %q, want %q", got, GitProviderGeneric)
	}
	repo.Spec.Timeout = &metav1.Duration{Duration: 2 * time.Minute}
	repo.Spec.Provider = GitProviderGitHub
	if got := repo.GetTimeout(); got != 2*time.Minute {
		t.Errorf("GetTimeout() = %v, want 2m", got)
	}
	if got := repo.GetProvider(); got != GitProviderGitHub {
		t.Errorf("GetProvider() = %q, want %q", got, GitProviderGitHub)
	}
}
