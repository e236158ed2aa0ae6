package migratecmd

import (
	"context"
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/cli/output"
)

// fluxCRDs selects the CRDs migrate moves, as Flux's installer labels them.
var fluxCRDs = client.MatchingLabels{"app.kubernetes.io/part-of": "flux"}

// migrateCluster rewrites the objects of every Flux CRD at its storage
// version and then records that version alone in status.storedVersions.
func migrateCluster(ctx context.Context, cl client.Client, p output.Progress) error {
	var crds apiextensionsv1.CustomResourceDefinitionList
	if err := cl.List(ctx, &crds, fluxCRDs); err != nil {
		return fmt.Errorf("failed to list CRDs: %w", err)
	}
	for _, c := range crds.Items {
		if err := migrateCRD(ctx, cl, p, c.Name); err != nil {
			return err
		}
	}
	return nil
}

func migrateCRD(ctx context.Context, cl client.Client, p output.Progress, name string) error {
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := cl.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
		return fmt.Errorf("failed to get CRD %s: %w", name, err)
	}
	storage := ""
	for _, v := range c.Spec.Versions {
		if v.Storage {
			storage = v.Name
		}
	}
	if storage == "" {
		return fmt.Errorf("no storage version found for CRD %s", name)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return rewriteObjects(ctx, cl, p, c, storage) })
	if err != nil {
		return fmt.Errorf("failed to migrate resources for CRD %s: %w", name, err)
	}
	if len(c.Status.StoredVersions) == 1 && c.Status.StoredVersions[0] == storage {
		return nil
	}
	c.Status.StoredVersions = []string{storage}
	if err := cl.Status().Update(ctx, c); err != nil {
		return fmt.Errorf("failed to update CRD %s status: %w", name, err)
	}
	p.Successf("%s migrated to storage version %s", name, storage)
	return nil
}

// rewriteObjects writes each object of c back through the API server, which
// stores it at the storage version. Managed fields recorded at another
// apiVersion are moved to the storage one, since server-side apply would
// otherwise keep converting them; an object whose managed fields are all
// current gets an empty merge patch, which still rewrites it in etcd when
// it was stored at an older version.
func rewriteObjects(ctx context.Context, cl client.Client, p output.Progress, c *apiextensionsv1.CustomResourceDefinition, version string) error {
	apiVersion := c.Spec.Group + "/" + version
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(apiVersion)
	list.SetKind(c.Spec.Names.ListKind)
	if err := cl.List(ctx, list); err != nil {
		return fmt.Errorf("failed to list resources for CRD %s: %w", c.Name, err)
	}
	for i := range list.Items {
		item := &list.Items[i]
		patch, err := managedFieldsPatch(item, apiVersion)
		if err != nil {
			return err
		}
		if err := cl.Patch(ctx, item, patch); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s/%s/%s failed to migrate: %w", item.GetKind(), item.GetNamespace(), item.GetName(), err)
		}
		p.Successf("%s/%s/%s migrated to version %s", item.GetKind(), item.GetNamespace(), item.GetName(), version)
	}
	return nil
}

// managedFieldsPatch is a JSON patch moving the managed-fields entries of
// obj recorded at another apiVersion to apiVersion, or an empty merge patch
// when there are none. The patch tests each entry's old value first, so
// that a concurrent change to the managed fields fails it instead of
// rewriting the wrong entry.
func managedFieldsPatch(obj *unstructured.Unstructured, apiVersion string) (client.Patch, error) {
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value string `json:"value"`
	}
	var ops []op
	for i, mf := range obj.GetManagedFields() {
		if mf.APIVersion == apiVersion {
			continue
		}
		path := fmt.Sprintf("/metadata/managedFields/%d/apiVersion", i)
		ops = append(ops, op{Op: "test", Path: path, Value: mf.APIVersion}, op{Op: "replace", Path: path, Value: apiVersion})
	}
	if len(ops) == 0 {
		return client.RawPatch(types.MergePatchType, []byte("{}")), nil
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("failed to marshal migration patch for %s/%s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return client.RawPatch(types.JSONPatchType, data), nil
}
