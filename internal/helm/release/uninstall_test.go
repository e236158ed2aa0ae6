package release

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	ri "helm.sh/helm/v4/pkg/release"
	"helm.sh/helm/v4/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/helmserver"
)

func TestOnlyRecordsGone(t *testing.T) {
	gone := fmt.Errorf("uninstall: Failed to purge the release: %w", driver.ErrReleaseNotFound)
	deleted := apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "sh.helm.release.v1.app.v1")
	completed := func(errs ...error) error {
		return fmt.Errorf("uninstallation completed with %d error(s): %w", len(errs), errors.Join(errs...))
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"purge found no record", completed(gone), true},
		{"purge's Secret deleted under it", completed(fmt.Errorf("uninstall: Failed to purge the release: %w", deleted)), true},
		{"wait failed too", completed(errors.New("timed out waiting for the condition"), gone), false},
		{"post-delete hook failed", completed(errors.New("job failed: BackoffLimitExceeded")), false},
		{"not a completed uninstall", fmt.Errorf("failed to delete release: app"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := onlyRecordsGone(tt.err); got != tt.want {
				t.Errorf("onlyRecordsGone(%q) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// vanishing is a storage driver whose records are deleted by someone
// else just before Helm purges them, as when the namespace holding them
// is being deleted.
type vanishing struct {
	driver.Driver
	secrets kubernetes.Interface
	ns      string
	t       *testing.T
}

func (v *vanishing) Delete(key string) (ri.Releaser, error) {
	if err := v.secrets.CoreV1().Secrets(v.ns).Delete(context.Background(), key, metav1.DeleteOptions{}); err != nil {
		v.t.Errorf("deleting %s under Helm: %v", key, err)
	}
	return v.Driver.Delete(key)
}

// TestUninstallWhileRecordsAreDeleted runs against the real API server: an
// installed release is uninstalled while its storage Secrets are deleted
// by someone else before Helm purges them; the uninstall succeeds and
// neither the release's objects nor its records are left.
func TestUninstallWhileRecordsAreDeleted(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	c, err := NewClient(env.Config, Options{Name: "app", Namespace: ns, StorageNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec:       helmv2.HelmReleaseSpec{Timeout: &metav1.Duration{Duration: time.Minute}},
	}
	if _, err := c.Install(ctx, hr, helmserver.NewChart("app", "1.0.0", "1.0"), map[string]any{}, false); err != nil {
		t.Fatal(err)
	}
	clientset := kubernetes.NewForConfigOrDie(env.Config)
	c.cfg.Releases.Driver = &vanishing{Driver: c.cfg.Releases.Driver, secrets: clientset, ns: ns, t: t}
	if err := c.Uninstall(ctx, hr); err != nil {
		t.Fatalf("uninstall while the records were deleted: %v", err)
	}
	list, err := clientset.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=app"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d release Secrets left", len(list.Items))
	}
	if _, err := clientset.CoreV1().ConfigMaps(ns).Get(ctx, "app-app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the release's ConfigMap app-app: %v, want it deleted", err)
	}
}
