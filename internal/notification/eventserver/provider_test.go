package eventserver

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestTargetFromSecret(t *testing.T) {
	tests := []struct {
		name    string
		kind    string
		data    map[string]string
		want    target
		wantErr bool
	}{
		{name: "empty keeps spec", data: map[string]string{},
			want: target{address: "http://spec", proxy: "http://specproxy", username: "spec-user"}},
		{
			name: "secret wins",
			data: map[string]string{"address": "http://secret\n", "proxy": "http://p", "token": " t ",
				"username": "u", "password": "pw", "headers": "X-A: one\nAuthorization: Bearer x\n"},
			want: target{address: "http://secret", proxy: "http://p", token: "t", username: "u", password: "pw",
				headers: map[string]string{"X-A": "one", "Authorization": "Bearer x"}},
		},
		{name: "headers not a map", data: map[string]string{"headers": "- a\n- b\n"}, wantErr: true},
		{name: "github app without its key", kind: "githubdispatch",
			data: map[string]string{"githubAppID": "1", "githubAppInstallationID": "2"}, wantErr: true},
		{name: "github app keys are not slack's", kind: "slack", data: map[string]string{"githubAppID": "1"},
			want: target{kind: "slack", address: "http://spec", proxy: "http://specproxy", username: "spec-user"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := target{kind: tt.kind, address: "http://spec", proxy: "http://specproxy", username: "spec-user"}
			data := map[string][]byte{}
			for k, v := range tt.data {
				data[k] = []byte(v)
			}
			err := got.fromSecret(data)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(target{})); diff != "" {
				t.Errorf("target (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProxyFromSecret(t *testing.T) {
	got, err := proxyFromSecret(map[string][]byte{"address": []byte("http://proxy:3128"), "username": []byte("u"), "password": []byte("p")})
	if err != nil || got != "http://u:p@proxy:3128" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := proxyFromSecret(map[string][]byte{}); err == nil {
		t.Error("want an error without address")
	}
}

func TestRedactAddress(t *testing.T) {
	tests := map[string]string{
		"https://hooks.slack.com/services/T0/B0/secret": "https://hooks.slack.com",
		"https://user:pass@example.com/x?token=y":       "https://example.com",
		"::not a url": "<unparsable address>",
	}
	for in, want := range tests {
		if got := redactAddress(in); got != want {
			t.Errorf("redactAddress(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewHTTPClient(t *testing.T) {
	c, err := newHTTPClient(&target{timeout: 3 * time.Second, proxy: "http://proxy:3128"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Timeout != 3*time.Second {
		t.Errorf("timeout = %s", c.Timeout)
	}
	req, _ := http.NewRequest(http.MethodPost, "https://example.com", nil)
	u, err := c.Transport.(*http.Transport).Proxy(req)
	if err != nil || u == nil || u.String() != (&url.URL{Scheme: "http", Host: "proxy:3128"}).String() {
		t.Errorf("proxy = %v, %v", u, err)
	}
	if _, err := newHTTPClient(&target{caPEM: []byte("not pem")}); err == nil {
		t.Error("want an error for a CA that is not PEM")
	}
	if _, err := newHTTPClient(&target{proxy: "::"}); err == nil {
		t.Error("want an error for a bad proxy")
	}
}
