// Foya web: attachments in the conversation. Every attachment can be saved;
// images are shown and videos played in place. Their bytes come from
// GET /attachments/{id} with the token (an <img src> could not send it) and
// are shown from blob: URLs, released when another session opens.
import { askToken, showError, token } from './api.js';
import { el, esc, fmtBytes } from './dom.js';

const IMAGE = /^image\/(png|jpeg|gif|webp)$/;
const VIDEO = /^video\/(mp4|webm|quicktime)$/;
// Images up to this size are shown at once; larger ones, and videos, when asked.
const AUTO_IMAGE_BYTES = 8 << 20;
const urls = new Set();
// Images are fetched when they come near the visible part of the log, so a
// long history with many pictures costs only what is looked at.
const nearView = 'IntersectionObserver' in window ? new IntersectionObserver((entries) => {
  for (const e of entries) {
    if (!e.isIntersecting) continue;
    nearView.unobserve(e.target);
    showMedia(e.target).catch(() => { e.target.classList.add('unavailable'); });
  }
}, { rootMargin: '400px' }) : null;

// attachmentsHTML lists atts; hydrateAttachments wires the list once it is
// in the page.
export function attachmentsHTML(atts) {
  if (!(atts || []).length) return '';
  return '<ul class="atts">' + atts.map((a) => {
    const media = IMAGE.test(a.mediaType) ? 'image' : VIDEO.test(a.mediaType) ? 'video' : '';
    return '<li data-id="' + esc(a.id) + '" data-media="' + media + '" data-type="' + esc(a.mediaType) + '" data-size="' + Number(a.size) + '" data-name="' + esc(a.name) + '">' +
      '<span class="attname">' + esc(a.name) + '</span> <small>(' + esc(a.mediaType || a.kind) + ', ' + fmtBytes(a.size) + ')</small> ' +
      (media === 'video' || (media === 'image' && a.size > AUTO_IMAGE_BYTES) ? '<button type="button" class="attshow" aria-label="' + (media === 'video' ? 'Play ' : 'Show ') + esc(a.name) + '">' + (media === 'video' ? 'Play' : 'Show') + '</button> ' : '') +
      '<button type="button" class="attsave" aria-label="Save ' + esc(a.name) + '">Save</button></li>';
  }).join('') + '</ul>';
}

export function hydrateAttachments(root) {
  for (const li of root.querySelectorAll('ul.atts li[data-id]')) {
    if (li.dataset.wired) continue;
    li.dataset.wired = '1';
    const save = li.querySelector('button.attsave');
    save.onclick = () => saveAttachment(li, save).catch(showError);
    const show = li.querySelector('button.attshow');
    if (show) show.onclick = () => { show.disabled = true; showMedia(li).catch((e) => { show.disabled = false; showError(e); }); };
    else if (li.dataset.media === 'image') {
      if (nearView) nearView.observe(li);
      else showMedia(li).catch(() => { li.classList.add('unavailable'); });
    }
  }
}

async function showMedia(li) {
  const url = await blobURL(li.dataset.id, false);
  const name = li.dataset.name;
  let media;
  if (li.dataset.media === 'video') {
    media = el('video', 'attmedia');
    media.controls = true; media.preload = 'metadata'; media.setAttribute('aria-label', name);
  } else {
    media = el('img', 'attmedia'); media.alt = name; media.decoding = 'async';
  }
  media.src = url;
  const b = li.querySelector('button.attshow');
  if (b) b.remove();
  if (li.dataset.media === 'image') {
    // The picture is shown at most 20rem high; a click shows it whole.
    const zoom = el('button', 'attzoom'); zoom.type = 'button';
    zoom.setAttribute('aria-label', 'Show ' + name + ' at full size'); zoom.setAttribute('aria-pressed', 'false');
    zoom.onclick = () => { const on = li.classList.toggle('zoomed'); zoom.setAttribute('aria-pressed', String(on)); };
    zoom.appendChild(media);
    li.appendChild(zoom);
    return;
  }
  li.appendChild(media);
  if (li.dataset.media === 'video') media.play().catch(() => {}); // the person asked to play it
}

async function saveAttachment(li, btn) {
  btn.disabled = true;
  try {
    const a = el('a');
    a.href = await blobURL(li.dataset.id, true);
    a.download = li.dataset.name || 'attachment';
    document.body.appendChild(a); a.click(); a.remove();
  } finally { btn.disabled = false; }
}

// blobURL fetches an attachment with the token (asking for it again when
// the kernel refuses it) and returns a blob: URL of its bytes.
async function blobURL(id, download) {
  for (let attempt = 0; ; attempt++) {
    const t = token();
    const headers = t ? { Authorization: 'Bearer ' + t } : {};
    const resp = await fetch('/attachments/' + encodeURIComponent(id) + (download ? '?download=1' : ''), { headers });
    if (resp.status === 401 && attempt < 3 && askToken(t !== '')) continue;
    if (!resp.ok) {
      let msg = 'HTTP ' + resp.status;
      try { const b = await resp.json(); if (b.errors && b.errors[0]) msg = b.errors[0].message; } catch (e) { /* not JSON */ }
      throw new Error('attachment ' + id + ': ' + msg);
    }
    const url = URL.createObjectURL(await resp.blob());
    urls.add(url);
    return url;
  }
}

// releaseAttachments frees the bytes of every attachment shown so far (the
// log is being replaced).
export function releaseAttachments() {
  if (nearView) nearView.disconnect();
  for (const u of urls) URL.revokeObjectURL(u);
  urls.clear();
}
