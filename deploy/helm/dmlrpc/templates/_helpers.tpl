{{- define "dmlrpc.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "dmlrpc.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "dmlrpc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "dmlrpc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end -}}

{{- define "dmlrpc.labels" -}}
{{ include "dmlrpc.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "dmlrpc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "dmlrpc.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "dmlrpc.image" -}}
{{- $tag := .Values.image.tag -}}
{{- if not $tag -}}
{{- if eq .Values.platform "windows" -}}
{{- $tag = printf "%s-windows-%s" .Chart.AppVersion .Values.windows.ltsc -}}
{{- else if eq .Values.provider "cuda" -}}
{{- $tag = printf "%s-linux-cuda" .Chart.AppVersion -}}
{{- else -}}
{{- $tag = printf "%s-linux-cpu" .Chart.AppVersion -}}
{{- end -}}
{{- end -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}

{{- define "dmlrpc.validate" -}}
{{- if and (eq .Values.platform "windows") (ne .Values.provider "directml") -}}
{{- fail "platform windows serves provider directml" -}}
{{- end -}}
{{- if and (eq .Values.platform "linux") (eq .Values.provider "directml") -}}
{{- fail "provider directml needs platform windows" -}}
{{- end -}}
{{- if and (has .Values.provider (list "cuda" "directml")) (not .Values.gpu.resourceName) -}}
{{- fail "provider cuda or directml needs gpu.resourceName (the device plugin's resource)" -}}
{{- end -}}
{{- if and .Values.tls.secretName (not .Values.tls.serverName) -}}
{{- fail "tls.secretName needs tls.serverName (a DNS name of the certificate, which the probes check)" -}}
{{- end -}}
{{- $builds := dict "ltsc2019" "10.0.17763" "ltsc2022" "10.0.20348" "ltsc2025" "10.0.26100" -}}
{{- if and (eq .Values.platform "windows") (ne (get $builds .Values.windows.ltsc) .Values.windows.build) -}}
{{- fail (printf "windows.build %s is not the build of %s" .Values.windows.build .Values.windows.ltsc) -}}
{{- end -}}
{{- end -}}

{{/* Where the Secrets are mounted; on Windows the same path is on C: (C:\etc\dmlrpc), where Python finds it too. */}}
{{- define "dmlrpc.secretsDir" -}}/etc/dmlrpc{{- end -}}

{{/*
The probe of a TLS-serving pod: the kubelet's gRPC probe speaks plaintext only, so an exec probe runs
grpc.health.v1 Check over TLS on loopback from inside the container, trusting ca.crt (else tls.crt), presenting the
server's own certificate (mutual TLS: it must be signed by the client CA too), and checking tls.serverName.
*/}}
{{- define "dmlrpc.tlsProbe" -}}
{{- $dir := printf "%s/tls/" (include "dmlrpc.secretsDir" .) -}}
{{- $python := ternary "C:\\Python\\python.exe" "python" (eq .Values.platform "windows") -}}
exec:
  command:
    - {{ $python | quote }}
    - -c
    - >-
      import os, sys, grpc; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g;
      r = lambda n: open({{ $dir | quote }} + n, 'rb').read() if os.path.exists({{ $dir | quote }} + n) else None;
      c = grpc.ssl_channel_credentials(r('ca.crt') or r('tls.crt'), r('tls.key'), r('tls.crt'));
      s = grpc.secure_channel('127.0.0.1:{{ .Values.grpc.port }}', c, [('grpc.ssl_target_name_override', {{ .Values.tls.serverName | quote }})]);
      sys.exit(g.HealthStub(s).Check(h.HealthCheckRequest(), timeout=3).status != h.HealthCheckResponse.SERVING)
{{- end -}}
