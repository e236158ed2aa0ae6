package secretcache

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.APIServerOnly) }

func start(t *testing.T) *Cache {
	t.Helper()
	env := testenv.Get(t)
	c, err := New(env.Config, env.Client, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = c.Start(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	if !c.WaitForSync(t.Context()) {
		t.Fatal("the Secret watch did not sync")
	}
	return c
}

// waitVersion waits until the watch holds version for key ("" for gone).
func waitVersion(t *testing.T, c *Cache, key client.ObjectKey, version string) {
	t.Helper()
	for {
		v, ok := c.Version(key)
		if (version == "" && !ok) || (ok && v == version) {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("the watch never held %s at %q", key, version)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func token(t *testing.T, c *Cache, key client.ObjectKey) string {
	t.Helper()
	var s corev1.Secret
	if err := c.Get(t.Context(), key, &s); err != nil {
		t.Fatalf("Get(%s) = %v", key, err)
	}
	return string(s.Data["token"])
}

// TestSecretReadOncePerVersion follows one Secret through its life: read
// once while unchanged, read again once changed, not found once deleted.
func TestSecretReadOncePerVersion(t *testing.T) {
	env := testenv.Get(t)
	c := start(t)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace(t), Name: "provider-token"},
		Data: map[string][]byte{"token": []byte("one")}}
	env.Create(t, sec)
	key := client.ObjectKeyFromObject(sec)
	waitVersion(t, c, key, sec.ResourceVersion)

	steps := []struct {
		name      string
		change    func()
		wantToken string
		wantReads int64
	}{
		{name: "first read goes to the API server", wantToken: "one", wantReads: 1},
		{name: "unchanged: from memory", wantToken: "one", wantReads: 1},
		{name: "unchanged again: from memory", wantToken: "one", wantReads: 1},
		{name: "changed: read once more", wantToken: "two", wantReads: 2, change: func() {
			sec.Data["token"] = []byte("two")
			if err := env.Client.Update(t.Context(), sec); err != nil {
				t.Fatal(err)
			}
			waitVersion(t, c, key, sec.ResourceVersion)
		}},
		{name: "changed, then unchanged: from memory", wantToken: "two", wantReads: 2},
	}
	for _, st := range steps {
		if st.change != nil {
			st.change()
		}
		if got := token(t, c, key); got != st.wantToken {
			t.Errorf("%s: token = %q, want %q", st.name, got, st.wantToken)
		}
		if got := c.APIReads(); got != st.wantReads {
			t.Errorf("%s: %d API reads, want %d", st.name, got, st.wantReads)
		}
	}

	if err := env.Client.Delete(t.Context(), sec); err != nil {
		t.Fatal(err)
	}
	waitVersion(t, c, key, "")
	if err := c.Get(t.Context(), key, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get after delete = %v, want NotFound", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, held := c.data[key]; held {
		t.Error("the deleted Secret's data is still held")
	}
}

// TestOtherKindsPassThrough checks a ConfigMap read is the API reader's.
func TestOtherKindsPassThrough(t *testing.T) {
	env := testenv.Get(t)
	c := start(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace(t), Name: "cm"},
		Data: map[string]string{"k": "v"}}
	env.Create(t, cm)
	var got corev1.ConfigMap
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(cm), &got); err != nil || got.Data["k"] != "v" {
		t.Fatalf("Get = %v, %v", got.Data, err)
	}
	if n := c.APIReads(); n != 0 {
		t.Errorf("a ConfigMap read counted as %d Secret reads", n)
	}
}
