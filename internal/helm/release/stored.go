package release

import (
	"errors"
	"fmt"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Stored returns the newest record of release name in Helm's storage (the
// Secrets of storageNamespace), the chart embedded; nil when the release
// has none or was uninstalled (history kept).
func Stored(restConfig *rest.Config, storageNamespace, name string) (*releasev1.Release, error) {
	clientset, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return nil, fmt.Errorf("building Kubernetes client for Helm storage: %w", err)
	}
	store := storage.Init(driver.NewSecrets(clientset.CoreV1().Secrets(storageNamespace)))
	rls, err := store.Last(name)
	if err != nil {
		if errors.Is(err, driver.ErrReleaseNotFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading release %s/%s from Helm storage: %w", storageNamespace, name, err)
	}
	rel, err := toV1(rls)
	if err != nil || rel == nil || rel.Info == nil || rel.Info.Status == rcommon.StatusUninstalled {
		return nil, err
	}
	return rel, nil
}
