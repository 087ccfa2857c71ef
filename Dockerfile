# SPDX-License-Identifier: Apache-2.0
# Image with the otelcol-sdp Collector and the reference SDP sidecar.
#
#   docker build -t otelcol-sdp:dev .
#
# The Collector sits at the image root (/otelcol-sdp) because the official
# opentelemetry-collector Helm chart runs /<command.name>; the sidecar sits
# beside it (/sdp-sidecar) so one image serves both containers of the pod.
# The build commands are the Makefile's (`make build`): test/dist runs the RUN
# lines of the build stage and compares the binaries with the Makefile's.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
ENV CGO_ENABLED=0
# Module downloads first, so that a source change does not refetch them. The
# libraries otlpwire and sdp are modules of their own that go.mod replaces
# with their directories: their go.mod files must be there too.
COPY go.mod go.sum ./
COPY otlpwire/go.mod ./otlpwire/
COPY sdp/go.mod sdp/go.sum ./sdp/
COPY cmd/otelcol-sdp/go.mod cmd/otelcol-sdp/go.sum ./cmd/otelcol-sdp/
RUN go mod download && cd cmd/otelcol-sdp && go mod download
COPY . .
RUN cd cmd/otelcol-sdp && go build -trimpath -ldflags='-s -w' -o /out/otelcol-sdp .
RUN go build -trimpath -ldflags='-s -w' -o /out/sdp-sidecar ./cmd/sdp-sidecar

# distroless/static: no shell, no libc (the binaries are static), runs as the
# unprivileged "nonroot" user.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/otelcol-sdp /otelcol-sdp
COPY --from=build /out/sdp-sidecar /sdp-sidecar
# The configuration CMD names, so that the image starts as it is.
COPY deploy/docker/config.yaml /etc/otelcol-sdp/config.yaml
USER 65532:65532
# OTLP gRPC, OTLP HTTP, health_check, internal metrics, zpages.
EXPOSE 4317 4318 13133 8888 55679
ENTRYPOINT ["/otelcol-sdp"]
CMD ["--config=/etc/otelcol-sdp/config.yaml"]
