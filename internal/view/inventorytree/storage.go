package inventorytree

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/internal/helm/release"
)

// HelmStorage lists a HelmRelease's objects from the manifest of its
// latest release in Helm's storage (the sh.helm.release.v1.* Secrets), read
// with the Helm SDK as the controller reads it; none when there is no
// release. c's RESTMapper says which kinds are namespaced; cfg is the
// caller's, so Helm's storage is read with the caller's rights.
func HelmStorage(cfg *rest.Config, c client.Client) func(context.Context, *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return func(_ context.Context, u *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
		hr := &helmv2.HelmRelease{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, hr); err != nil {
			return nil, fmt.Errorf("HelmRelease %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
		hc, err := release.NewClient(cfg, release.Options{
			Name: hr.GetReleaseName(), Namespace: hr.GetReleaseNamespace(), StorageNamespace: hr.GetStorageNamespace(),
		})
		if err != nil {
			return nil, err
		}
		if _, err := hc.Observe(); err != nil {
			return nil, fmt.Errorf("HelmRelease %s/%s: %w", hr.Namespace, hr.Name, err)
		}
		return release.ManifestObjects(hc.Last(), c.IsObjectNamespaced)
	}
}
