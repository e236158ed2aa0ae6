package imageupdateautomation

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

const newImage = "ghcr.io/org/app:2.0.0"

// gitOut runs git on the server's bare app.git and returns its output.
func (f *fixture) gitOut(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir", filepath.Join(f.srv.Dir(), "app.git")}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// waitPushed waits until obj is Ready with a pushed commit other than not.
func (f *fixture) waitPushed(t *testing.T, obj *imagev1.ImageUpdateAutomation, not string) {
	t.Helper()
	f.env.WaitForReady(t, obj, func() (bool, string) {
		c := obj.Status.LastPushCommit
		return c != "" && c != not, "no new push yet: lastPushCommit " + c
	})
}

const messageTemplate = `Automated image update by {{ .AutomationObject }} for {{ .Values.cluster }}

{{ range .Changed.Changes -}}
- {{ .OldValue }} -> {{ .NewValue }}
{{ end -}}
Files:
{{ range $file, $_ := .Changed.FileChanges -}}
- {{ $file }}
{{ end -}}
{{ range $o, $_ := .Changed.Objects }}{{ $o.Kind | lower }}/{{ $o.Name }}{{ end }}`

func TestPushesSignedCommitWithTemplateMessage(t *testing.T) {
	f := newFixture(t)
	f.gitRepository(t)
	f.policy(t, "2.0.0")
	key := gitserver.GeneratePGPKey(t, "weir", "weir@example.com")
	f.env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "signing", Namespace: f.ns}, Data: map[string][]byte{"git.asc": key.Private}})
	obj := f.automation(func(a *imagev1.ImageUpdateAutomation) {
		a.Spec.GitSpec.Commit.MessageTemplate = messageTemplate
		a.Spec.GitSpec.Commit.MessageTemplateValues = map[string]string{"cluster": "prod"}
		a.Spec.GitSpec.Commit.SigningKey = &imagev1.SigningKey{SecretRef: meta.LocalObjectReference{Name: "signing"}}
	})
	f.env.Create(t, obj)
	f.waitPushed(t, obj, "")

	head := strings.TrimSpace(f.gitOut(t, "rev-parse", "main"))
	if obj.Status.LastPushCommit != head || obj.Status.LastPushTime == nil || obj.Status.LastAutomationRunTime == nil {
		t.Fatalf("status %+v, main at %s", obj.Status, head)
	}
	if parent := strings.TrimSpace(f.gitOut(t, "rev-parse", "main^")); parent != f.base {
		t.Errorf("pushed commit's parent %s, want the checked-out %s", parent, f.base)
	}
	if got := f.file(t, "main", "deploy/app.yaml"); got != f.deployment(newImage) {
		t.Errorf("deploy/app.yaml:\n%s", got)
	}
	wantMsg := "Automated image update by " + f.ns + "/auto for prod\n\n- " + oldImage + " -> " + newImage +
		"\nFiles:\n- app.yaml\ndeployment/app"
	if got := f.gitOut(t, "log", "-1", "--format=%B", "main"); strings.TrimSpace(got) != wantMsg {
		t.Errorf("commit message:\n%s\nwant:\n%s", got, wantMsg)
	}
	if got := f.gitOut(t, "log", "-1", "--format=%an <%ae>", "main"); strings.TrimSpace(got) != "weir <weir@example.com>" {
		t.Errorf("author %s", got)
	}
	gitserver.VerifyCommitPGP(t, filepath.Join(f.srv.Dir(), "app.git"), head, key)

	ready := conditions.Get(obj, meta.ReadyCondition)
	if ready.Reason != meta.SucceededReason || ready.Message != "repository up-to-date" {
		t.Errorf("Ready = %s: %s", ready.Reason, ready.Message)
	}
	if got := obj.Status.ObservedPolicies["app"]; got != (imagev1.ImageRef{Name: "ghcr.io/org/app", Tag: "2.0.0"}) || len(obj.Status.ObservedPolicies) != 1 {
		t.Errorf("observedPolicies %v", obj.Status.ObservedPolicies)
	}
	if obj.Status.ObservedSourceRevision != "main@sha1:"+head {
		t.Errorf("observedSourceRevision %s", obj.Status.ObservedSourceRevision)
	}
	f.env.AssertEvent(t, obj, meta.SucceededReason, "pushed commit '"+head[:7]+"' to branch 'main'\n"+wantMsg)

	var repo sourcev1.GitRepository
	if err := f.env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "app"}, &repo); err != nil {
		t.Fatal(err)
	}
	if repo.Annotations[meta.ReconcileRequestAnnotation] == "" {
		t.Error("the GitRepository was not asked to fetch the pushed commit")
	}
}

func TestSSHSignedPushToAnotherBranchAndRefspec(t *testing.T) {
	f := newFixture(t)
	f.env.Create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "git-ssh", Namespace: f.ns},
		Data:       map[string][]byte{"identity": f.key.PrivateKeyPEM, "known_hosts": f.srv.KnownHosts()},
	})
	f.env.Create(t, &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: f.ns},
		Spec: sourcev1.GitRepositorySpec{
			URL: f.srv.SSHURL("app.git"), Interval: metav1.Duration{Duration: time.Hour},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
			SecretRef: &meta.LocalObjectReference{Name: "git-ssh"},
		},
	})
	// A stale auto branch, which the automation overwrites (GitForcePushBranch).
	f.srv.Commit(t, "app.git", gitserver.Commit{Branch: "auto", Files: map[string]string{"stale.txt": "x"}})
	f.policy(t, "2.0.0")
	obj := f.automation(func(a *imagev1.ImageUpdateAutomation) {
		a.Spec.GitSpec.Commit.SigningKey = &imagev1.SigningKey{Type: imagev1.SigningKeyTypeSSH, SecretRef: meta.LocalObjectReference{Name: "git-ssh"}}
		a.Spec.GitSpec.Push = &imagev1.PushSpec{Branch: "auto", Refspec: "refs/heads/auto:refs/heads/review"}
	})
	f.env.Create(t, obj)
	f.waitPushed(t, obj, "")

	hash := obj.Status.LastPushCommit
	for _, branch := range []string{"auto", "review"} {
		if got := strings.TrimSpace(f.gitOut(t, "rev-parse", branch)); got != hash {
			t.Errorf("%s at %s, want %s", branch, got, hash)
		}
	}
	if parent := strings.TrimSpace(f.gitOut(t, "rev-parse", hash+"^")); parent != f.base {
		t.Errorf("parent %s: the push branch is rebuilt from main (%s)", parent, f.base)
	}
	if main := strings.TrimSpace(f.gitOut(t, "rev-parse", "main")); main != f.base {
		t.Errorf("main moved to %s", main)
	}
	if obj.Status.ObservedSourceRevision != "main@sha1:"+f.base {
		t.Errorf("observedSourceRevision %s, want the checkout branch's", obj.Status.ObservedSourceRevision)
	}
	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(allowed, []byte("weir@example.com "+string(ssh.MarshalAuthorizedKey(f.key.PublicKey))), 0o600); err != nil {
		t.Fatal(err)
	}
	f.gitOut(t, "-c", "gpg.format=ssh", "-c", "gpg.ssh.allowedSignersFile="+allowed, "verify-commit", hash)
	f.env.AssertEvent(t, obj, meta.SucceededReason,
		"pushed commit '"+hash[:7]+"' to branch 'auto' and refspecs 'refs/heads/auto:refs/heads/review'\nUpdate from image update automation")
}

func TestNothingCommittedWhenUpToDate(t *testing.T) {
	f := newFixture(t)
	f.gitRepository(t)
	f.policy(t, "1.0.0") // what the file already says
	obj := f.automation(nil)
	f.env.Create(t, obj)
	f.env.WaitForReady(t, obj, nil)
	if obj.Status.LastPushCommit != "" || obj.Status.ObservedSourceRevision != "main@sha1:"+f.base {
		t.Errorf("status %+v", obj.Status)
	}
	if head := strings.TrimSpace(f.gitOut(t, "rev-parse", "main")); head != f.base {
		t.Errorf("main moved to %s", head)
	}
	f.env.AssertEvent(t, obj, meta.SucceededReason, "repository up-to-date")

	// Nothing changed since: the run resolves the branch and clones nothing.
	packs := f.srv.UploadPacks()
	f.env.RequestReconcile(t, obj)
	f.env.WaitForReady(t, obj, nil)
	if got := f.srv.UploadPacks(); got != packs {
		t.Errorf("%d clones for a run with nothing new", got-packs)
	}
	// A new commit on main is checked out, and still gives nothing to push.
	head := f.srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"docs/x.md": "x"}})
	f.env.RequestReconcile(t, obj)
	f.env.WaitForReady(t, obj, func() (bool, string) {
		return obj.Status.ObservedSourceRevision == "main@sha1:"+head, "observed " + obj.Status.ObservedSourceRevision
	})
	if obj.Status.LastPushCommit != "" || f.srv.UploadPacks() == packs {
		t.Errorf("lastPushCommit %q, %d clones", obj.Status.LastPushCommit, f.srv.UploadPacks()-packs)
	}
}

func TestLostPushRaceIsRedoneOnce(t *testing.T) {
	f := newFixture(t)
	f.gitRepository(t)
	f.policy(t, "2.0.0")
	raced := make(chan string, 1)
	hooks.Store(f.ns, func(attempt int) {
		if attempt == 0 && len(raced) == 0 {
			raced <- f.srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"other.txt": "pushed meanwhile"}})
		}
	})
	t.Cleanup(func() { hooks.Delete(f.ns) })
	obj := f.automation(nil)
	f.env.Create(t, obj)
	f.waitPushed(t, obj, "")

	race := <-raced
	head := strings.TrimSpace(f.gitOut(t, "rev-parse", "main"))
	if obj.Status.LastPushCommit != head {
		t.Errorf("lastPushCommit %s, main %s", obj.Status.LastPushCommit, head)
	}
	if parent := strings.TrimSpace(f.gitOut(t, "rev-parse", "main^")); parent != race {
		t.Errorf("parent %s, want the commit that won the race %s", parent, race)
	}
	if got := f.file(t, "main", "other.txt"); got != "pushed meanwhile" {
		t.Errorf("the other commit was lost: other.txt %q", got)
	}
	if got := f.file(t, "main", "deploy/app.yaml"); got != f.deployment(newImage) {
		t.Errorf("deploy/app.yaml:\n%s", got)
	}
}

func TestPushRaceLostTwiceFails(t *testing.T) {
	f := newFixture(t)
	f.gitRepository(t)
	f.policy(t, "2.0.0")
	n := 0
	hooks.Store(f.ns, func(int) {
		n++
		f.srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"other.txt": strings.Repeat("x", n)}})
	})
	obj := f.automation(nil)
	f.env.Create(t, obj)
	ready := f.env.WaitForFailure(t, obj, imagev1.GitOperationFailedReason)
	hooks.Delete(f.ns)
	if !strings.HasPrefix(ready.Message, "failed to update source: push main to ") || !strings.Contains(ready.Message, "remote branch moved since it was checked out") {
		t.Errorf("Ready message %q", ready.Message)
	}
	// The next retry, without a race, pushes.
	f.waitPushed(t, obj, "")
}

func TestPolicySelectorAndPolicyWatch(t *testing.T) {
	f := newFixture(t)
	f.gitRepository(t)
	p := f.policy(t, "2.0.0") // not labelled: not selected
	obj := f.automation(func(a *imagev1.ImageUpdateAutomation) {
		a.Spec.PolicySelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "web"}}
		a.Spec.GitSpec.Commit.Author.Name = "" // optional, as in Flux
	})
	f.env.Create(t, obj)
	f.env.WaitForReady(t, obj, nil)
	if obj.Status.LastPushCommit != "" || len(obj.Status.ObservedPolicies) != 0 {
		t.Fatalf("an unselected policy was applied: %+v", obj.Status)
	}
	// Labelling the policy selects it: the automation runs at once, not
	// after its one-hour interval.
	f.env.Update(t, p, func() { p.Labels = map[string]string{"team": "web"} })
	f.waitPushed(t, obj, "")
	first := obj.Status.LastPushCommit
	// A new latest image is written at once too.
	start := time.Now()
	f.elect(t, p, "ghcr.io/org/app", "2.1.0")
	f.waitPushed(t, obj, first)
	t.Logf("policy change to push: %s", time.Since(start).Round(time.Millisecond))
	if got := f.file(t, "main", "deploy/app.yaml"); got != f.deployment("ghcr.io/org/app:2.1.0") {
		t.Errorf("deploy/app.yaml:\n%s", got)
	}
	if got := f.gitOut(t, "log", "-1", "--format=%an <%ae>", "main"); strings.TrimSpace(got) != "<weir@example.com>" {
		t.Errorf("author %q", got)
	}
}

func TestStalledAndFailedConfigurations(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*imagev1.ImageUpdateAutomation)
		noRepo  bool
		reason  string
		stalled bool
		message string // prefix
	}{
		{
			name: "tag checkout",
			change: func(a *imagev1.ImageUpdateAutomation) {
				a.Spec.GitSpec.Checkout = &imagev1.GitCheckoutSpec{Reference: imagev1.GitRepositoryRef{Tag: "v1"}}
			},
			reason: imagev1.InvalidSourceConfigReason, stalled: true, message: "weir checks out branches only",
		},
		{
			name:   "removed template field",
			change: func(a *imagev1.ImageUpdateAutomation) { a.Spec.GitSpec.Commit.MessageTemplate = "{{ .Updated }}" },
			reason: imagev1.RemovedTemplateFieldReason, stalled: true,
			message: "template uses removed '.Updated' field. Please use '.Changed' instead.",
		},
		{
			name: "invalid policy selector",
			change: func(a *imagev1.ImageUpdateAutomation) {
				a.Spec.PolicySelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
			},
			reason: imagev1.InvalidPolicySelectorReason, stalled: true, message: "failed to parse policy selector: ",
		},
		{
			name:   "missing git repository",
			noRepo: true, reason: imagev1.SourceManagerFailedReason,
			message: "failed configuring source manager: unable to get source '",
		},
		{
			name: "missing signing secret",
			change: func(a *imagev1.ImageUpdateAutomation) {
				a.Spec.GitSpec.Commit.SigningKey = &imagev1.SigningKey{SecretRef: meta.LocalObjectReference{Name: "nope"}}
			},
			reason: imagev1.SourceManagerFailedReason, message: "failed configuring source manager: failed to get secret '",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if !tt.noRepo {
				f.gitRepository(t)
			}
			f.policy(t, "2.0.0")
			obj := f.automation(tt.change)
			f.env.Create(t, obj)
			ready := f.env.WaitForFailure(t, obj, tt.reason)
			if !strings.HasPrefix(ready.Message, tt.message) {
				t.Errorf("Ready message %q, want prefix %q", ready.Message, tt.message)
			}
			if got := conditions.IsTrue(obj, meta.StalledCondition); got != tt.stalled {
				t.Errorf("Stalled = %v, want %v", got, tt.stalled)
			}
			if head := strings.TrimSpace(f.gitOut(t, "rev-parse", "main")); head != f.base {
				t.Errorf("main moved to %s", head)
			}
			f.env.AssertEvent(t, obj, tt.reason, ready.Message)
		})
	}
}

// TestWithoutForcePushBranch runs the phases with GitForcePushBranch off
// (the manager's reconciler has it on; the object is suspended so that
// only this one acts): updates go on top of the existing push branch.
func TestWithoutForcePushBranch(t *testing.T) {
	f := newFixture(t)
	f.gitRepository(t)
	f.gitOut(t, "branch", "auto", "main")
	autoTip := f.srv.Commit(t, "app.git", gitserver.Commit{Branch: "auto", Files: map[string]string{"kept.txt": "kept"}})
	f.policy(t, "2.0.0")
	obj := f.automation(func(a *imagev1.ImageUpdateAutomation) {
		a.Spec.Suspend = true
		a.Spec.GitSpec.Push = &imagev1.PushSpec{Branch: "auto"}
	})
	f.env.Create(t, obj)
	r := &Reconciler{Client: f.env.Client}
	out := &outcome{runTime: time.Now()}
	err := r.reconcile(context.Background(), obj, out)
	if err != nil || out.push == nil {
		t.Fatalf("reconcile: %v, %+v", err, out)
	}
	if parent := strings.TrimSpace(f.gitOut(t, "rev-parse", "auto^")); parent != autoTip {
		t.Errorf("parent %s, want auto's tip %s", parent, autoTip)
	}
	if got := f.file(t, "auto", "kept.txt"); got != "kept" {
		t.Errorf("kept.txt %q", got)
	}
	if got := f.file(t, "auto", "deploy/app.yaml"); got != f.deployment(newImage) {
		t.Errorf("deploy/app.yaml:\n%s", got)
	}
}

// TestNoCrossNamespaceRefs runs the phases with --no-cross-namespace-refs
// on an automation (suspended, so that only this reconciler acts) naming
// a GitRepository in another namespace.
func TestNoCrossNamespaceRefs(t *testing.T) {
	f := newFixture(t)
	obj := f.automation(func(a *imagev1.ImageUpdateAutomation) {
		a.Spec.Suspend = true
		a.Spec.SourceRef.Namespace = "elsewhere"
	})
	f.env.Create(t, obj)
	r := &Reconciler{Client: f.env.Client, NoCrossNamespaceRefs: true}
	out := &outcome{runTime: time.Now()}
	err := r.reconcile(context.Background(), obj, out)
	applyStatus(obj, out, err)
	ready := conditions.Get(obj, meta.ReadyCondition)
	want := "can't access 'GitRepository/elsewhere/app', cross-namespace references have been blocked"
	if !conditions.IsTrue(obj, meta.StalledCondition) || ready.Reason != meta.AccessDeniedReason || ready.Message != want {
		t.Errorf("Ready = %s: %q; want stalled %s: %q", ready.Reason, ready.Message, meta.AccessDeniedReason, want)
	}
}
