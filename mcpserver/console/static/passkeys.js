// passkeys.js adds a passkey (the Passkeys page) and signs in with one
// (the sign-in page) through the browser's WebAuthn API. The server makes
// each ceremony's options and keeps its challenge; this module hands the
// options to the browser and the credential it makes back to the form,
// which the console then checks. The form's button is disabled until
// this module runs.

function show(form, text) {
  const p = form.querySelector("[data-passkey-error]");
  p.textContent = text;
  p.hidden = false;
}

async function options(form) {
  const body = new URLSearchParams();
  body.set("csrf", form.elements.csrf.value);
  if (form.elements.name) {
    body.set("name", form.elements.name.value);
  }
  const res = await fetch(form.dataset.options, { method: "POST", body, credentials: "same-origin" });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    throw new Error(data.error || "The console refused (HTTP " + res.status + ").");
  }
  return data.publicKey;
}

for (const form of document.querySelectorAll("form[data-passkey]")) {
  if (!window.PublicKeyCredential || !PublicKeyCredential.parseCreationOptionsFromJSON) {
    show(form, "This browser cannot use passkeys here.");
    continue;
  }
  form.addEventListener("submit", async (event) => {
    if (form.elements.credential.value) {
      return;
    }
    event.preventDefault();
    if (!form.reportValidity()) {
      return;
    }
    try {
      const opts = await options(form);
      const credential = form.dataset.passkey === "create"
        ? await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(opts) })
        : await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(opts) });
      form.elements.credential.value = JSON.stringify(credential.toJSON());
      form.submit();
    } catch (err) {
      show(form, err.name === "NotAllowedError" ? "No passkey was used (cancelled, or it timed out)." : err.message);
    }
  });
  form.querySelector("button").disabled = false;
}
