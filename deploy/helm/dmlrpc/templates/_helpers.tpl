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
{{- $builds := dict "ltsc2019" "10.0.17763" "ltsc2022" "10.0.20348" "ltsc2025" "10.0.26100" -}}
{{- if and (eq .Values.platform "windows") (ne (get $builds .Values.windows.ltsc) .Values.windows.build) -}}
{{- fail (printf "windows.build %s is not the build of %s" .Values.windows.build .Values.windows.ltsc) -}}
{{- end -}}
{{- end -}}
