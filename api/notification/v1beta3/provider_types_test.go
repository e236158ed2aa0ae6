package v1beta3

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestProviderGetTimeout(t *testing.T) {
	tests := []struct {
		name    string
		timeout *metav1.Duration
		want    time.Duration
	}{
		{name: "default", want: 15 * time.Second},
		{name: "explicit", timeout: &metav1.Duration{Duration: time.Minute}, want: time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Provider{Spec: ProviderSpec{Timeout: tt.timeout}}
			if got := p.GetTimeout(); got != tt.want {
				t.Errorf("GetTimeout() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIsCommitStatusProvider(t *testing.T) {
	tests := map[string]bool{
		GitHubProvider:                   true,
		GitLabProvider:                   true,
		GiteaProvider:                    true,
		BitbucketServerProvider:          true,
		BitbucketProvider:                true,
		AzureDevOpsProvider:              true,
		SlackProvider:                    false,
		GitHubDispatchProvider:           false,
		GitHubPullRequestCommentProvider: false,
		GenericProvider:                  false,
		"":                               false,
	}
	for typ, want := range tests {
		if got := IsCommitStatusProvider(typ); got != want {
			t.Errorf("IsCommitStatusProvider(%q) = %v, want %v", typ, got, want)
		}
	}
}
