// SPDX-License-Identifier: Apache-2.0

// Package resolver finds the members of sdpshard's fleet of consumers: a
// static list, the A/AAAA or SRV records of a DNS name, or the
// EndpointSlices of a Kubernetes Service. It reports complete member lists,
// sorted by a stable identity, each time they change; what to do with a
// change (assignment, re-routing, metrics) is sdpshard's.
//
// # Identity
//
// Members are ordered and assigned by ID, not by address, so that a
// consumer that restarts with a new address keeps its resources:
//
//   - static: the endpoint itself.
//   - dns, record "a": the endpoint (tcp://address:port); a new address is
//     a new member.
//   - dns, record "srv": the SRV target name; the endpoint is its address
//     (asked of the same server) and the record's port. A target with
//     several addresses is dialled on the lowest.
//   - k8s: the endpoint's hostname (set for the pods of a StatefulSet
//     behind a headless Service: "consumer-2"), else the name of the pod
//     it targets, else its first address.
//
// # Errors
//
// A failed resolution (timeout, server failure, a name that does not
// exist or has no address, a failed list or watch) never changes the
// fleet: the last good list stays and the error goes to Settings.OnError
// and, rate-limited, to the log. The dns resolver therefore never empties
// the fleet; the k8s resolver does when the Service has no ready endpoint.
// With record "srv", a target without an address record is left out.
//
// # Kubernetes
//
// The k8s resolver reads only endpoints whose condition ready is true or
// unset. A terminating pod's endpoint is not ready (even while it is still
// serving), so a consumer leaves the fleet as soon as it starts to
// terminate, and its resources move to their new owners while it drains;
// a pod that is not yet ready joins once it is. A Service with
// publishNotReadyAddresses: true marks every endpoint ready, so its pods
// join as soon as they have an address.
//
// RBAC: the Collector's service account needs, in the Service's namespace,
//
//	apiVersion: rbac.authorization.k8s.io/v1
//	kind: Role
//	metadata:
//	  name: otelcol-sdp-resolver
//	  namespace: <the Service's namespace>
//	rules:
//	  - apiGroups: ["discovery.k8s.io"]
//	    resources: ["endpointslices"]
//	    verbs: ["get", "list", "watch"]
//
// bound to it by a RoleBinding in the same namespace. The client is built
// from the in-cluster configuration (the pod's service account).
package resolver
