package v1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func duration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

func TestGetTimeout(t *testing.T) {
	tests := []struct {
		name     string
		interval time.Duration
		timeout  *metav1.Duration
		want     time.Duration
	}{
		{name: "interval minus 30s", interval: 10 * time.Minute, want: 9*time.Minute + 30*time.Second},
		{name: "short interval floors at 30s", interval: 45 * time.Second, want: 30 * time.Second},
		{name: "interval of exactly 1m", interval: time.Minute, want: 30 * time.Second},
		{name: "zero interval floors at 30s", want: 30 * time.Second},
		{name: "explicit timeout wins", interval: 10 * time.Minute, timeout: duration(3 * time.Minute), want: 3 * time.Minute},
		{name: "explicit timeout longer than interval", interval: time.Minute, timeout: duration(time.Hour), want: time.Hour},
		{name: "explicit timeout below the floor", interval: 10 * time.Minute, timeout: duration(5 * time.Second), want: 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ks := &Kustomization{Spec: KustomizationSpec{
				Interval: metav1.Duration{Duration: tt.interval},
				Timeout:  tt.timeout,
			}}
			if got := ks.GetTimeout(); got != tt.want {
				t.Errorf("GetTimeout() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestGetRetryInterval(t *testing.T) {
	tests := []struct {
		name  string
		retry *metav1.Duration
		want  time.Duration
	}{
		{name: "defaults to interval", want: 5 * time.Minute},
		{name: "explicit retry interval", retry: duration(time.Minute), want: time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ks := &Kustomization{Spec: KustomizationSpec{
				Interval:      metav1.Duration{Duration: 5 * time.Minute},
				RetryInterval: tt.retry,
			}}
			if got := ks.GetRetryInterval(); got != tt.want {
				t.Errorf("GetRetryInterval() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestGetDeletionPolicy(t *testing.T) {
	for policy, want := range map[string]string{
		"":                   DeletionPolicyMirrorPrune,
		DeletionPolicyOrphan: DeletionPolicyOrphan,
		DeletionPolicyDelete: DeletionPolicyDelete,
	} {
		ks := &Kustomization{Spec: KustomizationSpec{DeletionPolicy: policy}}
		if got := ks.GetDeletionPolicy(); got != want {
			t.Errorf("GetDeletionPolicy() with %q = %q, want %q", policy, got, want)
		}
	}
}

func TestSourceReferenceString(t *testing.T) {
	tests := []struct {
		ref  CrossNamespaceSourceReference
		want string
	}{
		{CrossNamespaceSourceReference{Kind: "GitRepository", Name: "podinfo"}, "GitRepository/podinfo"},
		{CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "podinfo", Namespace: "apps"}, "OCIRepository/apps/podinfo"},
	}
	for _, tt := range tests {
		if got := tt.ref.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}
