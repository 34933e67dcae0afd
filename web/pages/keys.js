export async function render(view) { view.textContent = "Keys"; }
