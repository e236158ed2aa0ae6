package cli_test

import (
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// receiverPath is the webhook path the stand-in notification controller
// publishes.
const receiverPath = "/hook/5a3d7b0c2f6e9a1d4b8c7e0f3a6d9c2b5e8f1a4d7c0b3e6f9a2d5c8b1e4f7a0d"

// receiverReady answers as notification-controller would: while the
// Receiver is not suspended, each new generation and each new reconcile
// request gets Ready with the webhook path, the request's token echoed.
func receiverReady(u *unstructured.Unstructured) map[string]any {
	token := u.GetAnnotations()[meta.ReconcileRequestAnnotation]
	if kinds.Suspended(u) || (kinds.ObservedGeneration(u) == u.GetGeneration() && token == kinds.LastHandledReconcileAt(u)) {
		return nil
	}
	s := map[string]any{
		"webhookPath": receiverPath,
		"conditions":  readyCondition("Succeeded", "Receiver initialized for path: "+receiverPath),
	}
	if token != "" {
		s["lastHandledReconcileAt"] = token
	}
	return s
}

// TestReceivers takes Receivers through every verb: get (ready, failing,
// suspended, never reconciled), export, reconcile, suspend, resume and
// delete, with a stand-in controller answering for "github".
func TestReceivers(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	applyFixture(t, "receiver/objects.yaml", ns)
	fakeController(t, kinds.Receiver, ns, "github", receiverReady)

	steps := []struct {
		name   string
		args   []string
		code   int
		golden string
	}{
		{"get", []string{"get", "receivers"}, 0, "receiver/get.golden"},
		{"get one by the singular", []string{"get", "receiver", "github"}, 0, "receiver/get-one.golden"},
		{"get not ready", []string{"get", "receivers", "--status-selector", "ready=false"}, 0, "receiver/get-not-ready.golden"},
		{"get wide", []string{"get", "receivers", "-o", "wide"}, 0, "receiver/get-wide.golden"},
		{"get all", []string{"get", "all"}, 0, "receiver/get-all.golden"},
		{"get missing", []string{"get", "receivers", "missing"}, 1, "receiver/get-missing.golden"},
		{"export", []string{"export", "receiver", "github"}, 0, "receiver/export.golden"},
		{"reconcile", []string{"reconcile", "receiver", "github"}, 0, "receiver/reconcile.golden"},
		{"reconcile suspended", []string{"reconcile", "receiver", "paused"}, 1, "receiver/reconcile-suspended.golden"},
		{"suspend", []string{"suspend", "receiver", "github"}, 0, "receiver/suspend.golden"},
		{"get suspended", []string{"get", "receivers", "github"}, 0, "receiver/get-suspended.golden"},
		{"resume waits", []string{"resume", "receiver", "github"}, 0, "receiver/resume.golden"},
		{"delete silently", []string{"delete", "receiver", "zz-new", "-s"}, 0, "receiver/delete.golden"},
		{"delete name required", []string{"delete", "receiver"}, 1, "receiver/delete-name-required.golden"},
	}
	for _, s := range steps {
		res := weir(t, append(s.args, "-n", ns)...)
		if res.Code != s.code {
			t.Errorf("%s: exit code %d, want %d; stderr:\n%s", s.name, res.Code, s.code, res.Stderr)
		}
		assertGolden(t, s.golden, res.Output(), ns)
	}

	u := kinds.Receiver.New()
	if err := env.Client.Get(t.Context(), keyOf(ns, "github"), u); err != nil {
		t.Fatal(err)
	}
	if kinds.Suspended(u) || u.GetAnnotations()[meta.ReconcileRequestAnnotation] == "" {
		t.Errorf("github after reconcile and resume: suspended %v, annotations %v", kinds.Suspended(u), u.GetAnnotations())
	}
	if err := env.Client.Get(t.Context(), keyOf(ns, "zz-new"), kinds.Receiver.New()); err == nil {
		t.Error("zz-new still exists after delete")
	}
}

// TestReceiversAllNamespaces lists Receivers across namespaces.
func TestReceiversAllNamespaces(t *testing.T) {
	env := testenv.Get(t)
	ns, ns2 := env.Namespace(t), env.Namespace(t)
	applyFixture(t, "receiver/two-namespaces.yaml", ns, ns2)
	res := weir(t, "get", "receivers", "-A", "-l", "weir.test/case="+ns)
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	// Rows come in namespace order, and the namespaces' names are random:
	// compare them sorted.
	out := strings.NewReplacer(ns2+"\t", "NS2\t", ns+"\t", "NS\t").Replace(res.Stdout)
	lines := strings.SplitAfter(out, "\n")
	sort.Strings(lines[1:])
	assertGolden(t, "receiver/get-all-namespaces.golden", strings.Join(lines, ""))
}
