package commitstatus

import (
	"errors"
	"testing"

	"github.com/weir-gitops/weir/internal/notification/notifier"
)

func TestParseAddress(t *testing.T) {
	tests := []struct {
		in   string
		want repoAddress
	}{
		{in: "https://github.com/org/repo", want: repoAddress{origin: "https://github.com", path: "org/repo"}},
		{in: "https://github.com/org/repo.git/", want: repoAddress{origin: "https://github.com", path: "org/repo"}},
		{in: "ssh://git@github.example.com:2222/org/repo.git", want: repoAddress{origin: "https://github.example.com", path: "org/repo"}},
		{in: "git@gitlab.com:group/sub/project.git", want: repoAddress{origin: "https://gitlab.com", path: "group/sub/project"}},
		{in: "http://127.0.0.1:3000/o/r", want: repoAddress{origin: "http://127.0.0.1:3000", path: "o/r"}},
	}
	for _, tt := range tests {
		got, err := parseAddress(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseAddress(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "not a url", "ftp://host/o/r", "https:///o/r"} {
		if _, err := parseAddress(bad); !errors.Is(err, notifier.ErrInvalidConfig) {
			t.Errorf("parseAddress(%q) = %v, want ErrInvalidConfig", bad, err)
		}
	}
}

func TestNewRefusesMisconfiguredProviders(t *testing.T) {
	tests := []struct {
		name string
		o    notifier.Options
	}{
		{name: "no key", o: notifier.Options{Type: "github", Address: "https://github.com/o/r", Token: "t"}},
		{name: "github without token", o: notifier.Options{Type: "github", Address: "https://github.com/o/r"}},
		{name: "github without repo", o: notifier.Options{Type: "github", Address: "https://github.com/o", Token: "t"}},
		{name: "github with a deep path", o: notifier.Options{Type: "github", Address: "https://github.com/o/r/x", Token: "t"}},
		{name: "gitlab without project", o: notifier.Options{Type: "gitlab", Address: "https://gitlab.com", Token: "t"}},
		{name: "gitea without token", o: notifier.Options{Type: "gitea", Address: "https://gitea.io/o/r"}},
		{name: "bitbucket token not user:password", o: notifier.Options{Type: "bitbucket", Address: "https://bitbucket.org/o/r", Token: "t"}},
		{name: "bitbucketserver not a clone URL", o: notifier.Options{Type: "bitbucketserver", Address: "https://bb/projects/P/repos/r", Token: "t"}},
		{name: "bitbucketserver without credentials", o: notifier.Options{Type: "bitbucketserver", Address: "https://bb/scm/P/r.git", Username: "u"}},
		{name: "azuredevops without _git", o: notifier.Options{Type: "azuredevops", Address: "https://dev.azure.com/org/proj/repo", Token: "t"}},
		{name: "not a commit status type", o: notifier.Options{Type: "slack", Address: "https://x/o/r", Token: "t"}},
	}
	for _, tt := range tests {
		o := tt.o
		if tt.name != "no key" {
			o.CommitStatus = "k"
		}
		if _, err := New(o); !errors.Is(err, notifier.ErrInvalidConfig) {
			t.Errorf("%s: New() = %v, want ErrInvalidConfig", tt.name, err)
		}
	}
}
