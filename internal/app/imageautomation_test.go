package app

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	restclient "k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

func TestImageAutomationGates(t *testing.T) {
	if err := checkFeatureGates(map[string]bool{"GitForcePushBranch": false, "GitShallowClone": false,
		"GitAllBranchReferences": true, "GitSparseCheckout": true, "CacheSecretsAndConfigMaps": true}, []string{"image-automation"}); err != nil {
		t.Errorf("image-automation-controller's gates refused: %v", err)
	}
	if err := checkFeatureGates(map[string]bool{"GitForcePushBranch": true}, []string{"kustomize"}); err == nil {
		t.Error("an image-automation-controller gate accepted by kustomize alone")
	}
	tests := []struct {
		gates map[string]bool
		want  bool
	}{
		{gates: nil, want: true},
		{gates: map[string]bool{"GitForcePushBranch": false}, want: false},
		{gates: map[string]bool{"GitForcePushBranch": true}, want: true},
	}
	for _, tt := range tests {
		if got := gateOn(tt.gates, imageAutomationGateDefaults, "GitForcePushBranch"); got != tt.want {
			t.Errorf("GitForcePushBranch with %v = %v", tt.gates, got)
		}
	}
	if gateOn(nil, imageAutomationGateDefaults, "GitSparseCheckout") {
		t.Error("GitSparseCheckout is off by default")
	}
}

// TestRunImageAutomation runs weir-controller with
// --controllers=image-automation: an ImageUpdateAutomation pushes the
// image its policy elected.
func TestRunImageAutomation(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	cfg := kubeconfigOf(t, env)
	opts := DefaultOptions()
	opts.Controllers = []string{"image-automation"}
	opts.MetricsAddr, opts.HealthAddr, opts.SkipNameValidation = "0", "0", true
	runInBackground(t, cfg, opts)

	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "app.git")
	srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{
		"app.yaml": "image: ghcr.io/org/app:1.0.0 # {\"$imagepolicy\": \"" + ns + ":app\"}\n",
	}})
	policy := &imagev1.ImagePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: imagev1.ImagePolicySpec{
			ImageRepositoryRef: meta.NamespacedObjectReference{Name: "app"},
			Policy:             imagev1.ImagePolicyChoice{SemVer: &imagev1.SemVerPolicy{Range: "*"}},
		},
	}
	env.Create(t, policy, &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{URL: srv.HTTPURL("app.git"), Interval: metav1.Duration{Duration: time.Hour},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
	})
	policy.Status.LatestRef = &imagev1.ImageRef{Name: "ghcr.io/org/app", Tag: "1.1.0"}
	policy.Status.Conditions = []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionTrue,
		Reason: meta.SucceededReason, Message: "resolved", LastTransitionTime: metav1.Now()}}
	if err := env.Client.Status().Update(context.Background(), policy); err != nil {
		t.Fatal(err)
	}
	auto := &imagev1.ImageUpdateAutomation{
		ObjectMeta: metav1.ObjectMeta{Name: "auto", Namespace: ns},
		Spec: imagev1.ImageUpdateAutomationSpec{
			SourceRef: imagev1.CrossNamespaceSourceReference{Kind: imagev1.GitRepositoryKind, Name: "app"},
			Interval:  metav1.Duration{Duration: time.Hour},
			GitSpec:   &imagev1.GitSpec{Commit: imagev1.CommitSpec{Author: imagev1.CommitUser{Name: "weir", Email: "weir@example.com"}}},
		},
	}
	env.Create(t, auto)
	testenv.Eventually(t, testenv.DefaultTimeout, func(ctx context.Context) (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(auto), auto); err != nil {
			return false, err.Error()
		}
		return conditions.IsReady(auto) && auto.Status.LastPushCommit != "", repr(conditions.Get(auto, meta.ReadyCondition))
	})
	if !strings.HasPrefix(auto.Status.ObservedSourceRevision, "main@sha1:"+auto.Status.LastPushCommit) {
		t.Errorf("observedSourceRevision %s, lastPushCommit %s", auto.Status.ObservedSourceRevision, auto.Status.LastPushCommit)
	}
}

// kubeconfigOf returns the control plane's config, read from $KUBECONFIG
// as weir-controller reads it.
func kubeconfigOf(t *testing.T, env *testenv.Env) *restclient.Config {
	t.Helper()
	t.Setenv("KUBECONFIG", env.ControlPlane.KubeconfigPath())
	cfg, err := ctrl.GetConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
