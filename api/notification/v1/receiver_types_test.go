package v1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWebhookPath(t *testing.T) {
	// Expected digests computed with `printf '<token><name><namespace>' | sha256sum`.
	tests := []struct {
		name                         string
		token, objName, objNamespace string
		want                         string
	}{
		{
			name: "all empty is the digest of nothing",
			want: "/hook/e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		},
		{
			name:         "token, name and namespace are concatenated in that order",
			token:        "my-token",
			objName:      "github-receiver",
			objNamespace: "flux-system",
			want:         "/hook/a2a6463004a2a90fe82fde8ec65ef36d55f7277536579e55ef858b1bf5f8483c",
		},
		{
			name:         "plain concatenation, no separators",
			token:        "a",
			objName:      "b",
			objNamespace: "c",
			want:         "/hook/ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		},
		{
			name:  "same bytes split differently give the same path",
			token: "abc",
			want:  "/hook/ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WebhookPath(tt.token, tt.objName, tt.objNamespace); got != tt.want {
				t.Errorf("WebhookPath() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestGetWebhookPath(t *testing.T) {
	r := &Receiver{ObjectMeta: metav1.ObjectMeta{Name: "github-receiver", Namespace: "flux-system"}}
	want := "/hook/a2a6463004a2a90fe82fde8ec65ef36d55f7277536579e55ef858b1bf5f8483c"
	if got := r.GetWebhookPath("my-token"); got != want {
		t.Errorf("GetWebhookPath() = %q, want %q", got, want)
	}
	if other := r.GetWebhookPath("other-token"); other == want {
		t.Error("a different token must give a different path")
	}
}

func TestReceiverGetInterval(t *testing.T) {
	r := &Receiver{}
	if got := r.GetInterval(); got != 10*time.Minute {
		t.Errorf("default GetInterval() = %v, want 10m", got)
	}
	r.Spec.Interval = &metav1.Duration{Duration: time.Minute}
	if got := r.GetRequeueAfter(); got != time.Minute {
		t.Errorf("GetRequeueAfter() = %v, want 1m", got)
	}
}
