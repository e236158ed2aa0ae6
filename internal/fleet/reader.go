package fleet

import (
	"context"
	"errors"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// errListUnsupported is returned by graphReader.List: the build reads
// single objects only.
var errListUnsupported = errors.New("the offline fleet reader lists nothing")

// graphReader is the client.Reader render.Kustomization reads ConfigMaps
// and Secrets through, offline: the objects the cluster's graph applies,
// and the decryption keys given to Load for the Secret a Kustomization's
// spec.decryption names when the graph does not yield it.
type graphReader struct {
	cluster *Cluster
	// decryptionSecret is the name of the node's decryption Secret.
	decryptionSecret string
	keys             map[string][]byte
}

var _ client.Reader = (*graphReader)(nil)

// Get reads a ConfigMap or a Secret of the graph into obj. A Secret's
// stringData is merged into data, as the API server does.
func (r *graphReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		u := r.cluster.objects[KeyOf("ConfigMap", key.Namespace, key.Name)]
		if u == nil {
			return apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
		}
		return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, o)
	case *corev1.Secret:
		u := r.cluster.objects[KeyOf("Secret", key.Namespace, key.Name)]
		if u == nil {
			if key.Name == r.decryptionSecret && len(r.keys) > 0 {
				o.Name, o.Namespace, o.Data = key.Name, key.Namespace, maps.Clone(r.keys)
				return nil
			}
			return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, o); err != nil {
			return err
		}
		if o.Data == nil {
			o.Data = map[string][]byte{}
		}
		for k, v := range o.StringData {
			o.Data[k] = []byte(v)
		}
		o.StringData = nil
		return nil
	}
	return apierrors.NewNotFound(corev1.Resource("objects"), key.Name)
}

// List is not supported.
func (r *graphReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errListUnsupported
}
