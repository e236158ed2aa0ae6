package v1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestImagePolicyInterval(t *testing.T) {
	tests := []struct {
		name     string
		policy   ReflectionPolicy
		interval *metav1.Duration
		want     time.Duration
	}{
		{name: "default policy never refreshes", want: 0},
		{name: "IfNotPresent never refreshes", policy: ReflectIfNotPresent, interval: &metav1.Duration{Duration: time.Minute}, want: 0},
		{name: "Always defaults to 10m", policy: ReflectAlways, want: 10 * time.Minute},
		{name: "Always with zero interval defaults to 10m", policy: ReflectAlways, interval: &metav1.Duration{}, want: 10 * time.Minute},
		{name: "Always with interval", policy: ReflectAlways, interval: &metav1.Duration{Duration: time.Hour}, want: time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &ImagePolicy{Spec: ImagePolicySpec{DigestReflectionPolicy: tt.policy, Interval: tt.interval}}
			if got := p.GetInterval(); got != tt.want {
				t.Errorf("GetInterval() = %v, want %v", got, tt.want)
			}
			if got := p.GetRequeueAfter(); got != tt.want {
				t.Errorf("GetRequeueAfter() = %v, want %v", got, tt.want)
			}
		})
	}
	if got := (&ImagePolicy{}).GetDigestReflectionPolicy(); got != ReflectNever {
		t.Errorf("GetDigestReflectionPolicy() = %q, want Never", got)
	}
}

func TestImageRefString(t *testing.T) {
	tests := []struct {
		ref  ImageRef
		want string
	}{
		{ImageRef{Name: "ghcr.io/stefanprodan/podinfo", Tag: "5.0.3"}, "ghcr.io/stefanprodan/podinfo:5.0.3"},
		{ImageRef{Name: "ghcr.io/stefanprodan/podinfo", Tag: "5.0.3", Digest: "sha256:8704da90"}, "ghcr.io/stefanprodan/podinfo:5.0.3@sha256:8704da90"},
	}
	for _, tt := range tests {
		if got := tt.ref.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestImageRepositoryDefaults(t *testing.T) {
	r := &ImageRepository{Spec: ImageRepositorySpec{Interval: metav1.Duration{Duration: 5 * time.Minute}}}
	if got := r.GetTimeout(); got != 5*time.Minute {
		t.Errorf("GetTimeout() = %v, want the interval", got)
	}
	if got := r.GetExclusionList(); len(got) != 1 || got[0] != `^.*\.sig$` {
		t.Errorf("GetExclusionList() = %q", got)
	}
	r.Spec.ExclusionList = []string{}
	if got := r.GetExclusionList(); len(got) != 0 {
		t.Errorf("an explicit empty exclusion list became %q", got)
	}
	if got := r.GetProvider(); got != GenericProvider {
		t.Errorf("GetProvider() = %q, want generic", got)
	}
}

func TestImageUpdateAutomationDefaults(t *testing.T) {
	a := &ImageUpdateAutomation{}
	if got := a.GetUpdateStrategy(); got.Strategy != UpdateStrategySetters || got.Path != "" {
		t.Errorf("GetUpdateStrategy() = %+v", got)
	}
	a.Spec.Update = &UpdateStrategy{Path: "./clusters/prod"}
	if got := a.GetUpdateStrategy(); got.Strategy != UpdateStrategySetters || got.Path != "./clusters/prod" {
		t.Errorf("GetUpdateStrategy() = %+v", got)
	}
	if got := (SigningKey{}).GetType(); got != SigningKeyTypeGPG {
		t.Errorf("SigningKey.GetType() = %q, want gpg", got)
	}
	ref := CrossNamespaceSourceReference{Kind: GitRepositoryKind, Name: "flux-system"}
	if got := ref.String(); got != "GitRepository/flux-system" {
		t.Errorf("String() = %q", got)
	}
	ref.Namespace = "apps"
	if got := ref.String(); got != "GitRepository/apps/flux-system" {
		t.Errorf("String() = %q", got)
	}
}
