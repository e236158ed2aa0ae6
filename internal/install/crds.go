package install

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/config/crd"
)

// FieldManager is the server-side apply field manager of the installer,
// the name Flux's CLI applies its components with.
const FieldManager = "flux"

// CRDs applies every weir CRD and waits until each is Established, or until
// timeout passes. c's scheme must know apiextensions/v1.
func CRDs(ctx context.Context, c client.Client, opts crd.Options, timeout time.Duration) error {
	crds, err := crd.Load(opts)
	if err != nil {
		return err
	}
	for _, obj := range crds {
		obj.APIVersion = apiextensionsv1.SchemeGroupVersion.String()
		obj.Kind = "CustomResourceDefinition"
		//nolint:staticcheck // server-side apply of a typed object is what we want here
		if err := c.Patch(ctx, obj, client.Apply, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying CRD %s: %w", obj.Name, err)
		}
	}
	var pending string
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for _, want := range crds {
			var got apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, client.ObjectKey{Name: want.Name}, &got); err != nil || !established(&got) {
				pending = want.Name
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for CRD %s to be established: %w", pending, err)
	}
	return nil
}

func established(c *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// VersionCRD is the CRD whose labels say which version is installed and
// whether the installation is managed from Git, where Flux's tools look.
const VersionCRD = "gitrepositories.source.toolkit.fluxcd.io"

// bootstrapLabel is set by the kustomize controller on what a
// Kustomization applied: on VersionCRD it means weir manages itself.
const bootstrapLabel = "kustomize.toolkit.fluxcd.io/name"

// Bootstrapped reports whether the cluster's weir is managed from Git (a
// Kustomization applied its CRDs), and the installed version when known.
// A cluster without weir is not bootstrapped.
func Bootstrapped(ctx context.Context, c client.Client) (bool, string, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	err := c.Get(ctx, client.ObjectKey{Name: VersionCRD}, &crd)
	switch {
	case apierrors.IsNotFound(err):
		return false, "", nil
	case err != nil:
		return false, "", fmt.Errorf("reading CRD %s: %w", VersionCRD, err)
	}
	_, managed := crd.Labels[bootstrapLabel]
	return managed, crd.Labels[meta.VersionLabel], nil
}
