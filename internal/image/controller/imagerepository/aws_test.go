package imagerepository

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/awsfake"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

const ecrHost = "123456789012.dkr.ecr.eu-west-1.amazonaws.com"

// TestProviderAWSController scans "ECR" as the controller: IRSA's
// projected token file and role, exchanged by the SDK's chain with the
// fake STS, then the ECR login the registry demands. A second reconcile
// exchanges nothing. spec.serviceAccountName without the gate is refused
// with Flux's message and reaches no AWS API.
func TestProviderAWSController(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	fake := awsfake.New(t)
	fake.RegistryPassword = "ecr-pass-image"
	fake.Setenv(t)
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("irsa-projected-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", file)
	t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/image-reflector")
	reg := ociregistry.New(t, ociregistry.Options{Username: "AWS", Password: fake.RegistryPassword})
	reg.PushTags(t, "org/app", "app", "1.0.0", "1.1.0", "2.0.0")
	proxy, _ := awsfake.RegistryProxy(t, reg.URL())
	env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "to-ecr", Namespace: ns},
		Data: map[string][]byte{"address": []byte(proxy)}})

	repo := newRepo(ns, "ecr", ecrHost+"/org/app")
	repo.Spec.Provider = imagev1.AWSProvider
	repo.Spec.ProxySecretRef = &meta.LocalObjectReference{Name: "to-ecr"}
	env.Create(t, repo)
	env.WaitForReady(t, repo, nil)
	if n := repo.Status.LastScanResult.TagCount; n != 3 {
		t.Errorf("tagCount %d, want 3", n)
	}
	sts := fake.Requests("sts")
	if len(sts) != 1 || sts[0].Form.Get("WebIdentityToken") != "irsa-projected-token" ||
		sts[0].Form.Get("RoleArn") != "arn:aws:iam::123456789012:role/image-reflector" {
		t.Fatalf("STS calls = %+v, want one IRSA exchange", sts)
	}
	if ecr := fake.Requests("ecr"); len(ecr) != 1 || ecr[0].Region != "eu-west-1" || ecr[0].AccessKeyID == "" {
		t.Errorf("ECR calls = %+v", ecr)
	}
	env.RequestReconcile(t, repo)
	env.WaitHandled(t, repo)
	if n := len(fake.Requests("")); n != 2 {
		t.Errorf("%d AWS calls after a second scan, want 2 (cached)", n)
	}

	bySA := newRepo(ns, "by-sa", ecrHost+"/org/app")
	bySA.Spec.Provider, bySA.Spec.ServiceAccountName = imagev1.AWSProvider, "tenant"
	env.Create(t, bySA)
	ready := env.WaitForFailure(t, bySA, imagev1.AuthenticationFailedReason)
	if want := "failed to configure authentication options: ObjectLevelWorkloadIdentity feature gate is not enabled"; ready.Message != want {
		t.Errorf("gate off: %q, want %q", ready.Message, want)
	}
	if conditions.IsTrue(bySA, meta.ReadyCondition) || len(fake.Requests("")) != 2 {
		t.Errorf("gate off: Ready %v, %d AWS calls", conditions.Get(bySA, meta.ReadyCondition), len(fake.Requests("")))
	}
}
