// Register-tiled matrix products in WGSL on the browser's WebGPU adapter: how many rows and
// 4-wide column vectors one invocation should keep in registers. This is the measurement behind
// core/src/nn/linear/tiled.rs (8 rows × 2 vectors, workgroups of 8 × 8). Each variant is checked
// against a product computed in JavaScript; prints GFLOP/s, the best of three runs after a warm-up.
//
//   node bench/wgsl_matmul.mjs ['[[m, k, n], ...]' '[[rows, vectors, wx, wy, "scalar"|"vec4"|"arr"], ...]']
//
// "scalar" reads lhs a value at a time (as the kernel does), "vec4" four along k, "arr" keeps
// the accumulators in an array instead of named variables. Needs bench/node_modules.
import { chromium } from 'playwright-core';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox','--disable-gpu-sandbox','--enable-unsafe-webgpu','--no-first-run','--disable-background-networking','--disable-component-update','--disable-sync'] });
const page = await browser.newPage();
await page.route('http://localhost/', r => r.fulfill({body: '<html></html>', contentType: 'text/html'})); await page.goto('http://localhost/');
const shapes = JSON.parse(process.argv[2] ?? '[[512,384,1536],[512,1536,384]]');
const variants = JSON.parse(process.argv[3] ?? '[[1,1,16,16,"scalar"],[4,1,8,8,"scalar"],[4,2,8,8,"scalar"],[4,2,8,8,"vec4"],[8,2,8,8,"scalar"],[8,2,8,8,"arr"],[8,4,8,8,"scalar"],[16,2,8,8,"scalar"]]');
const out = await page.evaluate(async ({shapes, variants}) => {
  const adapter = await navigator.gpu.requestAdapter();
  const device = await adapter.requestDevice();
  const res = [];
  for (const [M, K, N] of shapes) {
  const a = new Float32Array(M*K).map(() => Math.random()-0.5);
  const b = new Float32Array(K*N).map(() => Math.random()-0.5);
  const ref = new Float32Array(M*N);
  for (let i=0;i<M;i++) for (let k=0;k<K;k++){ const av=a[i*K+k]; for (let j=0;j<N;j++) ref[i*N+j]+=av*b[k*N+j]; }
  const buf = (arr, usage) => { const g = device.createBuffer({size: arr.byteLength, usage, mappedAtCreation: true}); new Float32Array(g.getMappedRange()).set(arr); g.unmap(); return g; };
  const S = GPUBufferUsage.STORAGE, C = GPUBufferUsage.COPY_SRC, D = GPUBufferUsage.COPY_DST;
  const ga = buf(a, S), gb = buf(b, S);
  const gc = device.createBuffer({size: M*N*4, usage: S|C});
  const rd = device.createBuffer({size: M*N*4, usage: GPUBufferUsage.MAP_READ|D});
  for (const [R, V, WX, WY, amode] of variants) {
    // R rows x V vec4 columns per invocation; workgroup WX x WY.
    const N4 = N/4;
    let body = '';
    const acc = []; for (let r=0;r<R;r++) for (let v=0;v<V;v++) acc.push(`s${r}_${v}`);
    if (amode==='arr') { body += `var acc: array<vec4<f32>, ${R*V}>; var bv: array<vec4<f32>, ${V}>;`; } else { body += acc.map(s=>`var ${s}=vec4<f32>();`).join(''); }
    const rows = [...Array(R).keys()].map(r=>`let r${r}=min(i0+${r}u, ${M-1}u);`).join('');
    let loop;
    if (amode === 'arr') {
      loop = `for (var k=0u;k<${K}u;k++){ ${[...Array(V).keys()].map(v=>`bv[${v}]=b[k*${N4}u+j4+${v}u];`).join('')} ${[...Array(R).keys()].map(r=>`let a${r}=a[r${r}*${K}u+k];`).join('')}
        ${acc.map(s=>{const [r,v]=s.slice(1).split('_'); return `acc[${r*V}+${v}]+=a${r}*bv[${v}];`}).join('')} }`;
    } else 
    if (amode === 'vec4') {
      loop = `for (var k4=0u;k4<${K/4}u;k4++){ ${[...Array(R).keys()].map(r=>`let a${r}=a4[r${r}*${K/4}u+k4];`).join('')}
        for (var kk=0u;kk<4u;kk++){ let k=k4*4u+kk; ${[...Array(V).keys()].map(v=>`let b${v}=b[k*${N4}u+j4+${v}u];`).join('')}
        ${acc.map(s=>{const [r,v]=s.slice(1).split('_'); return `${s}+=a${r}[kk]*b${v};`}).join('')} } }`;
    } else {
      loop = `for (var k=0u;k<${K}u;k++){ ${[...Array(R).keys()].map(r=>`let a${r}=a[r${r}*${K}u+k];`).join('')} ${[...Array(V).keys()].map(v=>`let b${v}=b[k*${N4}u+j4+${v}u];`).join('')}
        ${acc.map(s=>{const [r,v]=s.slice(1).split('_'); return `${s}+=a${r}*b${v};`}).join('')} }`;
    }
    const writes = [...Array(R).keys()].map(r=>`if (i0+${r}u < ${M}u) { ${[...Array(V).keys()].map(v=>`c[(i0+${r}u)*${N4}u+j4+${v}u]=${amode==='arr'?`acc[${r*V+v}]`:`s${r}_${v}`};`).join('')} }`).join('');
    const code = `@group(0) @binding(0) var<storage,read> ${amode==='vec4'?'a4: array<vec4<f32>>':'a: array<f32>'}; @group(0) @binding(1) var<storage,read> b: array<vec4<f32>>; @group(0) @binding(2) var<storage,read_write> c: array<vec4<f32>>;
      @compute @workgroup_size(${WX},${WY}) fn main(@builtin(global_invocation_id) g: vec3<u32>) { let j4=g.x*${V}u; let i0=g.y*${R}u; if (j4 >= ${N4}u) { return; } ${rows} ${body} ${loop} ${writes} }`;
    const x = Math.ceil(N4/V/WX), y = Math.ceil(M/R/WY);
    const module = device.createShaderModule({code});
    const info = await module.getCompilationInfo(); if (info.messages.some(m=>m.type==='error')) { res.push(info.messages.map(m=>m.message).join(';')); continue; }
    const pipeline = device.createComputePipeline({layout:'auto', compute:{module, entryPoint:'main'}});
    const bg = device.createBindGroup({layout: pipeline.getBindGroupLayout(0), entries:[ga,gb,gc].map((buffer,i)=>({binding:i, resource:{buffer}}))});
    const run = async () => { const e=device.createCommandEncoder(); const p=e.beginComputePass(); p.setPipeline(pipeline); p.setBindGroup(0,bg); p.dispatchWorkgroups(x,y); p.end(); device.queue.submit([e.finish()]); await device.queue.onSubmittedWorkDone(); };
    await run();
    let best = 1e9; for (let r=0;r<3;r++){ const t=performance.now(); await run(); best=Math.min(best, performance.now()-t); }
    const e=device.createCommandEncoder(); e.copyBufferToBuffer(gc,0,rd,0,M*N*4); device.queue.submit([e.finish()]); await rd.mapAsync(GPUMapMode.READ); const got=new Float32Array(rd.getMappedRange().slice(0)); rd.unmap();
    let err=0; for (let i=0;i<got.length;i++) err=Math.max(err, Math.abs(got[i]-ref[i]));
    if (err > 1e-4 * Math.sqrt(K)) res.push(`DISAGREE: ${M}x${K}x${N} R${R} V${V} wg${WX}x${WY} ${amode}: max abs error ${err}`);
    res.push(`${M}x${K}x${N} R${R} V${V} wg${WX}x${WY} ${amode}: ${best.toFixed(0)} ms, ${(2*M*N*K/best/1e6).toFixed(2)} GFLOP/s, err ${err.toExponential(1)}`);
  }}
  return res;
}, {shapes, variants});
console.log(out.join('\n'));
await browser.close();
if (out.some((l) => !/GFLOP/.test(l))) process.exit(1);
