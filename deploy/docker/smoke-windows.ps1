<#
.SYNOPSIS
  Build, run and smoke-test the dmlrpc DirectML image on a Windows GPU host.
.DESCRIPTION
  Run from the repository root in PowerShell on Windows Server 2022 (or 2025 with -Ltsc ltsc2025) with Docker
  Engine (Windows containers) and a WDDM 2.5+ GPU driver. Builds deploy/docker/Dockerfile.windows, starts the
  container process-isolated with the host's display adapters (the DirectX device class), then checks:
  health SERVING, one top-k call, and that GetCapabilities reports DmlExecutionProvider on a real adapter (not a
  CPU fallback, not the Basic Render Driver). Exit status 0 on success; the container is removed either way.
.EXAMPLE
  powershell -ExecutionPolicy Bypass -File deploy\docker\smoke-windows.ps1
#>
[CmdletBinding()]
param(
    [ValidateSet('ltsc2019', 'ltsc2022', 'ltsc2025')] [string] $Ltsc = 'ltsc2022',
    [string] $Image = 'dmlrpc',
    [string] $Version = '0.1.0',
    [int] $Port = 50051,
    [switch] $NoBuild
)
$ErrorActionPreference = 'Stop'
$builds = @{ ltsc2019 = '10.0.17763'; ltsc2022 = '10.0.20348'; ltsc2025 = '10.0.26100' }
$build = $builds[$Ltsc]
$tag = "${Image}:${Version}-windows-${Ltsc}"
$name = "dmlrpc-smoke-$PID"

$hostBuild = [Environment]::OSVersion.Version
if ("$($hostBuild.Major).$($hostBuild.Minor).$($hostBuild.Build)" -ne $build) {
    throw "host build $hostBuild is not $build ($Ltsc): process isolation needs the same build; pass -Ltsc"
}
$adapters = Get-CimInstance Win32_VideoController | Select-Object -ExpandProperty Name
Write-Host "host adapters: $($adapters -join ', ')"

if (-not $NoBuild) {
    docker build --isolation process -f deploy/docker/Dockerfile.windows `
        --build-arg WINDOWS_LTSC=$Ltsc --build-arg WINDOWS_BUILD=$build -t $tag .
    if ($LASTEXITCODE -ne 0) { throw 'docker build failed' }
}

docker run --detach --name $name --isolation process `
    --device class/5B45201D-F2F2-4F3B-85BB-30FF1F953599 `
    -p "${Port}:50051" $tag --host 0.0.0.0 --provider directml | Out-Null
if ($LASTEXITCODE -ne 0) { throw 'docker run failed' }
try {
    Get-Content -Raw deploy/docker/smoke.py | docker exec -i $name C:\Python\python.exe - --expect-provider directml
    $status = $LASTEXITCODE
    if ($status -ne 0) {
        Write-Host '--- container log ---'
        docker logs $name
        throw "smoke test failed (exit $status)"
    }
    Write-Host "PASS $tag serves DirectML on this GPU"
}
finally {
    docker rm --force $name | Out-Null
}
