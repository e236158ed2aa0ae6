package dev

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/examples"
)

// Names of what weir dev creates, as `flux bootstrap` names them.
const (
	namespace  = "flux-system"
	syncName   = "flux-system"
	syncPath   = "./clusters/dev"
	ageSecret  = "sops-age"
	ageKeyName = "age.agekey"
	// receiverName names the Receiver a push calls, and its token Secret.
	receiverName = "fleet"
)

// bootstrap creates the flux-system namespace, the sops-age Secret holding
// the example's DEMO ONLY age key, and the GitRepository and Kustomization
// that sync clusters/dev from url: what `flux bootstrap` leaves in a cluster.
// With withReceiver it adds a generic Receiver for the GitRepository, with
// a random token, which the Git server's push hook calls as a Git host's
// webhook would.
func bootstrap(ctx context.Context, c client.Client, url string, withReceiver bool) error {
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: ageSecret, Namespace: namespace, Annotations: map[string]string{
				"kubernetes.io/description": "DEMO ONLY age key of weir's example fleet: anyone can read it",
			}},
			Data: map[string][]byte{ageKeyName: examples.DemoAgeKey()},
		},
		&sourcev1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Name: syncName, Namespace: namespace},
			Spec: sourcev1.GitRepositorySpec{
				URL:       url,
				Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
				// A push asks for a fetch at once (see Run); the interval
				// only catches what the push hook missed.
				Interval: metav1.Duration{Duration: time.Minute},
			},
		},
		&kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: syncName, Namespace: namespace},
			Spec: kustomizev1.KustomizationSpec{
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: syncName},
				Path:      syncPath,
				Prune:     true,
				Interval:  metav1.Duration{Duration: 10 * time.Minute},
			},
		},
	}
	if withReceiver {
		token := make([]byte, 24)
		if _, err := rand.Read(token); err != nil {
			return err
		}
		objs = append(objs,
			&corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: receiverName + "-webhook-token", Namespace: namespace},
				Data:       map[string][]byte{"token": []byte(hex.EncodeToString(token))},
			},
			&notificationv1.Receiver{
				ObjectMeta: metav1.ObjectMeta{Name: receiverName, Namespace: namespace},
				Spec: notificationv1.ReceiverSpec{
					Type:      notificationv1.GenericReceiver,
					SecretRef: &meta.LocalObjectReference{Name: receiverName + "-webhook-token"},
					Resources: []notificationv1.ReceiverResource{{CrossNamespaceObjectReference: notificationv1.CrossNamespaceObjectReference{
						APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.GitRepositoryKind, Name: syncName,
					}}},
				},
			})
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil {
			gvk, _ := apiutil.GVKForObject(obj, c.Scheme())
			return fmt.Errorf("creating %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
	}
	return nil
}

// requestFetch asks the flux-system GitRepository to fetch now, as `flux
// reconcile source git` and a notification Receiver do.
func requestFetch(ctx context.Context, c client.Client) error {
	repo := &sourcev1.GitRepository{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: syncName}, repo); err != nil {
		return err
	}
	patch := client.MergeFrom(repo.DeepCopy())
	ann := repo.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[meta.ReconcileRequestAnnotation] = time.Now().Format(time.RFC3339Nano)
	repo.SetAnnotations(ann)
	return c.Patch(ctx, repo, patch)
}

// callReceiver POSTs to the webhook of the Receiver bootstrap created, as a
// Git host does after a push.
func callReceiver(ctx context.Context, c client.Client, addr string) error {
	var r notificationv1.Receiver
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: receiverName}, &r); err != nil {
		return err
	}
	if r.Status.WebhookPath == "" {
		return fmt.Errorf("no webhook path yet (Receiver not ready)")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+r.Status.WebhookPath, strings.NewReader("{}"))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("webhook answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
