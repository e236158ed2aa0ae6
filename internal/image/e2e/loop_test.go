package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/controllers"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
	"github.com/weir-gitops/weir/internal/source/git"
)

func TestMain(m *testing.M) {
	testenv.Main(m, func(o *testenv.Options) {
		o.Setup = func(ctx context.Context, env *testenv.Env) error {
			_, err := controllers.Start(ctx, env, controllers.Options{
				Controllers: []string{"source", "kustomize", "image-reflector", "image-automation"},
			})
			return err
		}
	})
}

// deployment is the manifest in Git, its image marked with policy app.
func deployment(ns, image string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: %[1]s
spec:
  replicas: 2
  selector:
    matchLabels: {app: app}
  template:
    metadata:
      labels: {app: app}
    spec:
      containers:
        - name: app
          image: %[2]s # {"$imagepolicy": "%[1]s:app"}
`, ns, image)
}

const messageTemplate = `Automated image update

{{ range .Changed.Changes }}{{ .OldValue }} -> {{ .NewValue }}
{{ end }}`

// TestTagPushRollsOutDeployment is the whole loop: a new tag is pushed to
// the registry (and the ImageRepository asked to scan, as a registry
// webhook Receiver would); the ImagePolicy elects it; the automation
// commits it into the marker, signed, with the template's message, and
// pushes; the GitRepository fetches at once; the Kustomization applies;
// the Deployment rolls out. The time from tag push to rollout is logged.
func TestTagPushRollsOutDeployment(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	reg := ociregistry.New(t, ociregistry.Options{})
	reg.PushTags(t, "org/app", "app", "1.0.0")
	image := reg.Host() + "/org/app"

	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "fleet.git")
	srv.Commit(t, "fleet.git", gitserver.Commit{Files: map[string]string{"deploy/app.yaml": deployment(ns, image+":1.0.0")}})

	key := gitserver.GeneratePGPKey(t, "weir automation", "weir@example.com")
	interval := metav1.Duration{Duration: time.Hour} // nothing here waits for an interval
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "signing", Namespace: ns}, Data: map[string][]byte{"git.asc": key.Private}},
		&sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns}, Spec: sourcev1.GitRepositorySpec{
			URL: srv.HTTPURL("fleet.git"), Interval: interval, Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
		}},
		&kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns}, Spec: kustomizev1.KustomizationSpec{
			Interval: interval, Path: "./deploy", Prune: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
		}},
		&imagev1.ImageRepository{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns}, Spec: imagev1.ImageRepositorySpec{
			Image: image, Insecure: true, Interval: interval,
		}},
		&imagev1.ImagePolicy{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns}, Spec: imagev1.ImagePolicySpec{
			ImageRepositoryRef: meta.NamespacedObjectReference{Name: "app"},
			Policy:             imagev1.ImagePolicyChoice{SemVer: &imagev1.SemVerPolicy{Range: ">=1.0.0"}},
		}},
		&imagev1.ImageUpdateAutomation{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns}, Spec: imagev1.ImageUpdateAutomationSpec{
			SourceRef: imagev1.CrossNamespaceSourceReference{Kind: imagev1.GitRepositoryKind, Name: "fleet"},
			Interval:  interval,
			GitSpec: &imagev1.GitSpec{Commit: imagev1.CommitSpec{
				Author:          imagev1.CommitUser{Name: "weir", Email: "weir@example.com"},
				SigningKey:      &imagev1.SigningKey{SecretRef: meta.LocalObjectReference{Name: "signing"}},
				MessageTemplate: messageTemplate,
			}},
			Update: &imagev1.UpdateStrategy{Strategy: imagev1.UpdateStrategySetters, Path: "./deploy"},
		}},
	}
	env.Create(t, objs...)
	auto := objs[len(objs)-1].(*imagev1.ImageUpdateAutomation)
	env.WaitForReady(t, auto, nil)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns}}
	waitRolledOut(t, env, dep, image+":1.0.0")
	if auto.Status.LastPushCommit != "" {
		t.Fatalf("pushed %s while Git already had the latest image", auto.Status.LastPushCommit)
	}

	start := time.Now()
	reg.PushTags(t, "org/app", "app", "1.1.0")
	env.RequestReconcile(t, objs[3])
	waitRolledOut(t, env, dep, image+":1.1.0")
	elapsed := time.Since(start)
	t.Logf("tag push to rollout: %s", elapsed.Round(time.Millisecond))

	env.WaitForReady(t, auto, func() (bool, string) { return auto.Status.LastPushCommit != "", "no push recorded" })
	verifyPushed(t, srv, auto.Status.LastPushCommit, key,
		"Automated image update\n\n"+image+":1.0.0 -> "+image+":1.1.0\n", deployment(ns, image+":1.1.0"))
}

// waitRolledOut waits until the Deployment runs image and is Current.
func waitRolledOut(t *testing.T, env *testenv.Env, dep *appsv1.Deployment, image string) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
			return false, err.Error()
		}
		if got := dep.Spec.Template.Spec.Containers[0].Image; got != image {
			return false, "image " + got
		}
		s := dep.Status
		done := s.ObservedGeneration == dep.Generation && s.UpdatedReplicas == *dep.Spec.Replicas &&
			s.AvailableReplicas == *dep.Spec.Replicas && s.Replicas == *dep.Spec.Replicas
		return done, fmt.Sprintf("rolling out: %+v", s)
	})
}

// verifyPushed clones main and checks the pushed commit: its signature
// (weir's verifier and git verify-commit with gpg), message and file.
func verifyPushed(t *testing.T, srv *gitserver.Server, hash string, key gitserver.PGPKey, message, file string) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	commit, err := git.NewClient().Remote(ctx, srv.HTTPURL("fleet.git"), nil).Clone(dir, git.CloneOptions{Reference: git.Reference{Branch: "main"}})
	if err != nil {
		t.Fatal(err)
	}
	if commit.Hash != hash {
		t.Errorf("main at %s, lastPushCommit %s", commit.Hash, hash)
	}
	if commit.Message != message {
		t.Errorf("message %q, want %q", commit.Message, message)
	}
	kr, err := git.NewKeyRing(map[string][]byte{"author.asc": key.Public})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := git.VerifyCommit(commit, kr); err != nil {
		t.Errorf("signature: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "deploy", "app.yaml")); err != nil || string(got) != file {
		t.Errorf("deploy/app.yaml %q, %v", got, err)
	}
	gitserver.VerifyCommitPGP(t, filepath.Join(dir, ".git"), hash, key)
}
