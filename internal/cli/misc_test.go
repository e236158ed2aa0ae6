package cli_test

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/internal/devenv/testenv"
)

// event creates a Kubernetes Event about kind/name in ns, first seen ago
// before the test clock, repeated count times up to lastAgo.
func event(t *testing.T, ns, name, kind, obj, typ, reason, msg string, ago, lastAgo time.Duration, count int32) {
	t.Helper()
	env := testenv.Get(t)
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Name: obj, Namespace: ns},
		Type:           typ, Reason: reason, Message: msg, Count: count,
		FirstTimestamp: metav1.NewTime(now.Add(-ago)), LastTimestamp: metav1.NewTime(now.Add(-lastAgo)),
		Source: corev1.EventSource{Component: "kustomize-controller"},
	}
	if err := env.Client.Create(context.Background(), e); err != nil {
		t.Fatal(err)
	}
}

func TestEvents(t *testing.T) {
	env := testenv.Get(t)
	ns, ns2 := env.Namespace(t), env.Namespace(t)
	applyYAML(t, strings.ReplaceAll(strings.ReplaceAll(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: NS
spec:
  interval: 10m0s
  path: ./apps
  prune: true
  sourceRef:
    kind: GitRepository
    name: podinfo
    namespace: NS2
`, "NS2", ns2), "NS", ns))
	event(t, ns, "e1", "Kustomization", "apps", "Normal", "ReconciliationSucceeded", "Reconciliation finished in 1.2s, next run in 10m0s", 30*time.Minute, 5*time.Minute, 3)
	event(t, ns, "e2", "Kustomization", "apps", "Warning", "BuildFailed", "kustomization path not found", 2*time.Hour, 2*time.Hour, 1)
	event(t, ns, "e3", "Kustomization", "other", "Normal", "Progressing", "Deployment/default/podinfo created", 20*time.Minute, 20*time.Minute, 1)
	event(t, ns, "e4", "Pod", "podinfo-1", "Normal", "Scheduled", "not a Flux object", time.Minute, time.Minute, 1)
	event(t, ns2, "e5", "GitRepository", "podinfo", "Normal", "NewArtifact", "stored artifact for commit 'Release 6.3.5'", 40*time.Minute, 40*time.Minute, 1)

	steps := []struct {
		name   string
		args   []string
		code   int
		golden string
	}{
		{"namespace", []string{"events"}, 0, "events/namespace.golden"},
		{"for kind", []string{"events", "--for", "Kustomization"}, 0, "events/for-kind.golden"},
		{"for object and its source", []string{"events", "--for", "kustomization/apps"}, 0, "events/for-object.golden"},
		{"warnings", []string{"events", "--types", "warning"}, 0, "events/warnings.golden"},
		{"bad type", []string{"events", "--types", "error"}, 1, "events/bad-type.golden"},
		{"not a Flux kind", []string{"events", "--for", "Pod/podinfo-1"}, 1, "events/not-flux.golden"},
		{"none", []string{"events", "--for", "Bucket"}, 0, "events/none.golden"},
	}
	for _, s := range steps {
		res := weir(t, append(s.args, "-n", ns)...)
		if res.Code != s.code {
			t.Errorf("%s: exit code %d, want %d; stderr:\n%s", s.name, res.Code, s.code, res.Stderr)
		}
		assertGolden(t, s.golden, "stdout:\n"+res.Stdout+"stderr:\n"+res.Stderr, ns, ns2)
	}

	// --watch prints the existing events, then new ones as they come.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan result)
	go func() { done <- weirIO(ctx, t, "", out, "events", "-w", "--for", "Kustomization/other", "-n", ns) }()
	waitFor(t, out, "Deployment/default/podinfo created")
	event(t, ns, "e6", "Kustomization", "other", "Normal", "ReconciliationSucceeded", "Reconciliation finished", 0, 0, 1)
	waitFor(t, out, "Reconciliation finished")
	cancel()
	if res := <-done; res.Code != 0 {
		t.Fatalf("events -w: exit %d: %s", res.Code, res.Stderr)
	}
	assertGolden(t, "events/watch.golden", out.String(), ns)
}

func TestEnvsubst(t *testing.T) {
	t.Setenv("cluster_region", "eu-central-1")
	t.Setenv("REPLICAS", "3")
	input := `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: ${NAMESPACE:=apps}
data:
  region: ${cluster_region}
  replicas: "${REPLICAS}"
  zone: ${ZONE}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: raw
  labels:
    kustomize.toolkit.fluxcd.io/substitute: disabled
data:
  text: ${cluster_region}
`
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		golden string
	}{
		{"lenient", []string{"envsubst"}, 0, "envsubst/lenient.golden"},
		{"strict", []string{"envsubst", "--strict"}, 1, "envsubst/strict.golden"},
	} {
		res := weirIO(t.Context(), t, input, nil, tt.args...)
		if res.Code != tt.code {
			t.Errorf("%s: exit code %d, want %d; stderr:\n%s", tt.name, res.Code, tt.code, res.Stderr)
		}
		assertGolden(t, tt.golden, "stdout:\n"+res.Stdout+"stderr:\n"+res.Stderr)
	}
}

// TestCompletion loads the bash script into bash and checks that it
// registers a completion for weir; the other shells must produce a script.
func TestCompletion(t *testing.T) {
	res := weir(t, "completion", "bash")
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	bash := exec.Command("bash", "-c", "source /dev/stdin && complete -p weir")
	bash.Stdin = strings.NewReader(res.Stdout)
	var out, errOut bytes.Buffer
	bash.Stdout, bash.Stderr = &out, &errOut
	if err := bash.Run(); err != nil {
		t.Fatalf("bash could not load the script: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "weir") {
		t.Errorf("bash registered no completion for weir: %q", out.String())
	}
	for _, shell := range []string{"zsh", "fish", "powershell"} {
		res := weir(t, "completion", shell)
		if res.Code != 0 || !strings.Contains(res.Stdout, "weir") {
			t.Errorf("completion %s: exit %d, %d bytes: %s", shell, res.Code, len(res.Stdout), res.Stderr)
		}
	}
	// The script completes verbs and kinds from the command tree.
	res = weir(t, "__complete", "get", "sources", "")
	for _, want := range []string{"all", "git", "oci", "bucket", "helm", "chart"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("completions of `get sources` lack %q:\n%s", want, res.Stdout)
		}
	}
}
