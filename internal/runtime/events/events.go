// Package events records what a controller did where people and tools look:
// a Kubernetes Event on the object, and, when --events-addr is set, Flux's
// JSON event POSTed to the notification controller, which forwards it to
// Alerts. Event metadata (revision, checksum…) rides along as annotations on
// the Kubernetes Event and as the JSON event's metadata, both keyed with the
// object's API group (source.toolkit.fluxcd.io/revision), beside the
// object's own event.toolkit.fluxcd.io/* annotations, as Flux's recorder
// sends them: Flux's notification controller keeps only such keys.
package events

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/weir-gitops/weir/api/meta"
)

// Severities of a forwarded event.
const (
	SeverityInfo  = "info"
	SeverityError = "error"
	SeverityTrace = "trace"
)

// Event is the wire form of an event POSTed to the notification controller
// (event.toolkit.fluxcd.io).
type Event struct {
	InvolvedObject      corev1.ObjectReference `json:"involvedObject"`
	Severity            string                 `json:"severity"`
	Timestamp           time.Time              `json:"timestamp"`
	Message             string                 `json:"message"`
	Reason              string                 `json:"reason"`
	Metadata            map[string]string      `json:"metadata,omitempty"`
	ReportingController string                 `json:"reportingController"`
	ReportingInstance   string                 `json:"reportingInstance,omitempty"`
}

// Recorder emits events for one controller.
type Recorder struct {
	kube       record.EventRecorder
	scheme     *runtime.Scheme
	controller string
	instance   string
	webhook    string
	http       *http.Client
}

// NewRecorder returns a Recorder. webhook is the --events-addr URL; empty
// means Kubernetes Events only.
func NewRecorder(kube record.EventRecorder, scheme *runtime.Scheme, controller, instance, webhook string) *Recorder {
	return &Recorder{
		kube: kube, scheme: scheme, controller: controller, instance: instance,
		webhook: strings.TrimSuffix(webhook, "/"),
		http:    &http.Client{Timeout: 5 * time.Second},
	}
}

// Normal records an informational event.
func (r *Recorder) Normal(ctx context.Context, obj client.Object, reason string, metadata map[string]string, messageFormat string, args ...any) {
	r.emit(ctx, obj, SeverityInfo, reason, metadata, fmt.Sprintf(messageFormat, args...), true)
}

// Warning records an error event.
func (r *Recorder) Warning(ctx context.Context, obj client.Object, reason string, metadata map[string]string, messageFormat string, args ...any) {
	r.emit(ctx, obj, SeverityError, reason, metadata, fmt.Sprintf(messageFormat, args...), true)
}

// Forward sends an informational event to the notification controller
// only, without a Kubernetes Event: what a reconcile that changed nothing
// tells Alerts (a commit status, say) without writing to the cluster.
func (r *Recorder) Forward(ctx context.Context, obj client.Object, reason string, metadata map[string]string, messageFormat string, args ...any) {
	r.emit(ctx, obj, SeverityInfo, reason, metadata, fmt.Sprintf(messageFormat, args...), false)
}

func (r *Recorder) emit(ctx context.Context, obj client.Object, severity, reason string, metadata map[string]string, message string, kube bool) {
	gvk, err := apiutil.GVKForObject(obj, r.scheme)
	if err != nil {
		ctrllog.FromContext(ctx).Error(err, "cannot record event: unknown kind")
		return
	}
	eventType := corev1.EventTypeNormal
	if severity == SeverityError {
		eventType = corev1.EventTypeWarning
	}
	if kube && r.kube != nil {
		annotations := map[string]string{}
		for k, v := range metadata {
			annotations[gvk.Group+"/"+k] = v
		}
		r.kube.AnnotatedEventf(obj, annotations, eventType, reason, "%s", message)
	}
	if r.webhook == "" {
		return
	}
	event := Event{
		InvolvedObject: corev1.ObjectReference{
			APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
			Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID(),
			ResourceVersion: obj.GetResourceVersion(),
		},
		Severity: severity, Timestamp: time.Now().UTC(), Message: message, Reason: reason,
		Metadata: withObjectMetadata(obj, gvk.Group, metadata), ReportingController: r.controller, ReportingInstance: r.instance,
	}
	if err := r.post(ctx, event); err != nil {
		ctrllog.FromContext(ctx).Error(err, "cannot forward event", "reason", reason)
	}
}

// withObjectMetadata is the JSON event's metadata: the object's
// event.toolkit.fluxcd.io/* annotations under their own keys, and the
// controller's keys under the object's group, as Flux's recorder posts
// them; the receiving event server strips both prefixes.
func withObjectMetadata(obj client.Object, group string, metadata map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range obj.GetAnnotations() {
		if key, ok := strings.CutPrefix(k, meta.EventAnnotationPrefix); ok && key != "" {
			out[k] = v
		}
	}
	for k, v := range metadata {
		out[group+"/"+k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (r *Recorder) post(ctx context.Context, event Event) error {
	body, err := json.Marshal(event)
	if err != nil {
		return fmt.Errorf("encoding event: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.webhook+"/", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("building request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.http.Do(req)
	if err != nil {
		return fmt.Errorf("posting event: %w", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		// The notification controller already forwarded this event within
		// its rate-limit interval: nothing was lost.
		return nil
	case resp.StatusCode >= 300:
		return fmt.Errorf("posting event: %s", resp.Status)
	}
	return nil
}
